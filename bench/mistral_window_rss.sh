#!/usr/bin/env bash
# A 2-layer Mistral with sliding_window 256 at sequence 4096
# (testdata/examples/mistral_window256_s4096.onnx, made by
# testdata/export/export_mistral_window.py): peak RSS from /usr/bin/time -v of
# bench/ortrun in ONNX Runtime CPU for the original and the --target attnopt
# rewrite (attnopt.FlashAttention with sliding_window, custom-op library),
# interleaved with the order rotated, RUNS times each (default 5): min and
# median. OLD_ATTNOPT=path adds a side rewritten by another attnopt binary
# (e.g. one that kept the band as the op's mask). Needs bash kernels/ci.sh.
set -euo pipefail
source "$(dirname "$0")/rss_lib.sh"
orig=testdata/examples/mistral_window256_s4096.onnx
cp "$orig" "$tmp/original.onnx"
./attnopt rewrite "$orig" -o "$tmp/attnopt.onnx" --quiet >/dev/null
sides=(original attnopt)
if [[ -n "${OLD_ATTNOPT:-}" ]]; then
  "$OLD_ATTNOPT" rewrite "$orig" -o "$tmp/old.onnx" --quiet >/dev/null
  sides+=(old)
fi
n=${#sides[@]}
for s in "${sides[@]}"; do : >"$tmp/$s.kib"; done
for i in $(seq "$runs"); do
  for j in $(seq 0 $((n - 1))); do
    s="${sides[$(((i + j) % n))]}"
    peak "$tmp/$s.onnx" >>"$tmp/$s.kib"
  done
done
echo "mistral_window256_s4096 (ONNX Runtime CPU, $runs runs each, interleaved, order rotated)"
for s in "${sides[@]}"; do
  awk -v a="$(lo "$tmp/original.kib")" -v b="$(lo "$tmp/$s.kib")" -v c="$(med "$tmp/original.kib")" -v d="$(med "$tmp/$s.kib")" -v s="$s" -v st="$(stats "$tmp/$s.kib")" \
    'BEGIN {printf "  %-9s %s; original / this: %.1fx of the minima, %.1fx of the medians\n", s, st, a/b, c/d}'
done
