#!/usr/bin/env bash
# Builds attnopt and runs it on a bundled example: the SAGAN self-attention
# block at 64×64 (DESIGN.md §1, scaled down).
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o attnopt ./cmd/attnopt
model="${1:-testdata/examples/sagan_64x64.onnx}"
./attnopt inspect "$model" --explain
