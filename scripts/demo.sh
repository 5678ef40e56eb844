#!/usr/bin/env bash
# Builds attnopt and runs the main job on a bundled example: the SAGAN
# self-attention block at 64×64 (docs/design.md §1, scaled down) is inspected,
# rewritten into attnopt.FlashAttention and validated against the original.
set -euo pipefail
cd "$(dirname "$0")/.."
# Development mode: validate may use this checkout's .cache/ort and
# kernels/build (scripts/setup-ort.sh, kernels/ci.sh) when they exist, and
# says so; without them it runs the pure-Go runtime.
export ATTNOPT_DEV=1
go build -o attnopt ./cmd/attnopt
model="${1:-testdata/examples/sagan_64x64.onnx}"
out="$(mktemp -d)/$(basename "${model%.onnx}").attnopt.onnx"
./attnopt inspect "$model"
./attnopt rewrite "$model" -o "$out"
./attnopt validate "$model" "$out"
