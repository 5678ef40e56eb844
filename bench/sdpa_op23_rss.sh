#!/usr/bin/env bash
# The seed SDPA block (16 heads of dim 4, N = 10,000, fp16, bool mask)
# exported with the dynamo exporter at opset 23 is one ONNX Attention op,
# which ONNX Runtime 1.24's CPU kernel runs by materialising the scores.
# attnopt lifts it into a site; the --target attnopt rewrite runs with the
# custom-op library. Peak RSS from /usr/bin/time -v for the original and the
# rewrite, interleaved (original first on odd runs), RUNS times (default 5):
# min and median of each. Needs the custom-op library (bash kernels/ci.sh).
set -euo pipefail
source "$(dirname "$0")/rss_lib.sh"
orig=testdata/examples/seed_sdpa_mask_h16d4_dynamo_op23.onnx
./attnopt rewrite "$orig" -o "$tmp/rewrite.onnx" --quiet >/dev/null
: >"$tmp/o"; : >"$tmp/r"
for i in $(seq "$runs"); do
  if [ $((i % 2)) -eq 1 ]; then peak "$orig" >>"$tmp/o"; peak "$tmp/rewrite.onnx" >>"$tmp/r"
  else peak "$tmp/rewrite.onnx" >>"$tmp/r"; peak "$orig" >>"$tmp/o"; fi
done
echo "seed SDPA h16 d4 N 10000 fp16 bool mask, dynamo opset 23, ONNX Runtime CPU, $runs runs each (interleaved)"
echo "original (ONNX Attention):            $(stats "$tmp/o")"
echo "--target attnopt (FlashAttention):    $(stats "$tmp/r")"
awk -v a="$(lo "$tmp/o")" -v b="$(lo "$tmp/r")" -v c="$(med "$tmp/o")" -v d="$(med "$tmp/r")" \
  'BEGIN {printf "peak ratio original / rewrite: of the minima %.1fx, of the medians %.1fx\n", a/b, c/d}'
