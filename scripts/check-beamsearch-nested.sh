#!/usr/bin/env bash
# Attention inside ONNX Runtime's BeamSearch decoder, end to end: takes the
# corpus's tiny GPT-2 BeamSearch model (../shared/corpus, read-only), writes
# into a temporary folder a copy whose decoder computes attention with
# primitive ops (scripts/beamsearch/unfuse_decoder.py), rewrites it with
# --target attnopt and --target ort, validates the decoder subgraph in ONNX
# Runtime (`attnopt validate --runtime ort`, dims pinned), and runs
# BeamSearch on all of them: every one must give the original's sequences.
# Needs Python with onnx and onnxruntime 1.24 (PYTHON, default python3), the
# custom-op library (kernels/ci.sh or cmake) and ONNX Runtime's library
# (scripts/setup-ort.sh). About 10 s. Not part of CI (the corpus is not).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${CORPUS:-../shared/corpus}/onnxruntime/tiny_gpt2_beamsearch.onnx"
py="${PYTHON:-python3}"
[ -f "$corpus" ] || { echo "error: $corpus not found" >&2; exit 2; }
export ONNXRUNTIME_LIB="${ONNXRUNTIME_LIB:-$(bash scripts/setup-ort.sh)}"
export ATTNOPT_CUSTOM_OPS="${ATTNOPT_CUSTOM_OPS:-$PWD/kernels/build/cpu/libattnopt_ort.so}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/attnopt" ./cmd/attnopt
"$py" scripts/beamsearch/unfuse_decoder.py "$corpus" "$tmp/unfused.onnx"
pins=(--dim batch_size=2 --dim seq_len=3 --dim past_seq_len=4 --dim total_seq_len=7)
for t in attnopt ort; do
  "$tmp/attnopt" rewrite "$tmp/unfused.onnx" -o "$tmp/rew_$t.onnx" --target "$t" --quiet --min-scores 0  # tiny: fuse anyway
  "$tmp/attnopt" validate "$tmp/unfused.onnx" "$tmp/rew_$t.onnx" --runtime ort "${pins[@]}" --quiet
done
"$py" scripts/beamsearch/run_beamsearch.py "$ATTNOPT_CUSTOM_OPS" "$corpus" "$tmp/unfused.onnx" "$tmp/rew_attnopt.onnx" "$tmp/rew_ort.onnx"
