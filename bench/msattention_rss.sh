#!/usr/bin/env bash
# One com.microsoft.Attention (ONNX Runtime's packed-QKV attention) at
# B 1, H 1, S 16,384, head dim 8, fp32, without and with a (1, S) raw
# mask_index (testdata/examples/msattention_h1_s16384*.onnx, made by
# testdata/export/export_msattention.py): does ONNX Runtime 1.24's CPU kernel
# hold the B·H·S·T scores (1 GiB here)? Peak RSS from /usr/bin/time -v of
# bench/ortrun for the original, the --target attnopt rewrite (custom-op
# library) and the --target ort rewrite (MultiHeadAttention), interleaved
# with the order rotated every run, RUNS times each (default 5): min and
# median. Needs the custom-op library (bash kernels/ci.sh).
set -euo pipefail
source "$(dirname "$0")/rss_lib.sh"
for name in msattention_h1_s16384 msattention_h1_s16384_mask; do
  orig="testdata/examples/$name.onnx"
  cp "$orig" "$tmp/original.onnx"
  for t in attnopt ort; do ./attnopt rewrite "$orig" -o "$tmp/$t.onnx" --target "$t" --quiet >/dev/null; done
  compare_sides "$name" original attnopt ort
done
