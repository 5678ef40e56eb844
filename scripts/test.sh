#!/usr/bin/env bash
# The project's test command: Go tests (with ONNX Runtime's CPU library from
# the npm package onnxruntime-node) and, when present, the kernels' CPU tests
# and CUDA compile check.
set -euo pipefail
cd "$(dirname "$0")/.."
ONNXRUNTIME_LIB="$(bash scripts/setup-ort.sh)"
export ONNXRUNTIME_LIB
go vet ./...
go test -count=1 ./...
if [[ -f kernels/ci.sh ]]; then
  bash kernels/ci.sh
fi
