#!/usr/bin/env bash
# The project's test command. Builds and tests the kernels first (the CPU
# library and ONNX Runtime custom-op library, then a compile of the CUDA
# sources for sm_75…sm_90), so the Go tests can run attnopt.FlashAttention in
# real ONNX Runtime; then vets and tests all Go packages, reruns the ONNX
# Runtime backend's tests against the newest onnxruntime-node library
# (scripts/test-ort-compat.sh), tests the Python package with onnxruntime
# from PyPI (scripts/test-python.sh), and last runs the kernels' sanitizer
# stage (ASan + UBSan hostile tables and the fuzz target).
set -euo pipefail
cd "$(dirname "$0")/.."
ONNXRUNTIME_LIB="$(bash scripts/setup-ort.sh)"
export ONNXRUNTIME_LIB
# Its ASan + UBSan stage runs last (below), so a sanitizer failure cannot
# stop the other suites.
if [[ -f kernels/ci.sh ]]; then
  bash kernels/ci.sh --skip-sanitize
fi
go vet ./...
go test -count=1 ./...
# Fuzz the loader and load → rewrite → save → reload for a bounded time,
# seeded with every hostile class of internal/hostile (the crashers found so
# far); a failing input is written under graph/testdata/fuzz/ (about 3 min).
go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 60s ./graph
go test -run '^$' -fuzz '^FuzzRewrite$' -fuzztime 60s ./graph
bash scripts/test-ort-compat.sh
bash scripts/test-python.sh
if [[ -f kernels/ci.sh ]]; then
  bash kernels/ci.sh --only-sanitize
fi
