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
compare_sides mistral_window256_s4096 "${sides[@]}"
