#!/usr/bin/env bash
# GPU check for a machine with one GPU (written for an H200: nvcc, CMake and
# PyTorch present, no network): builds the kernels for sm_90 (override with
# CUDA_ARCH=80 etc.), runs the CPU tests, then bench/gpu_check.py for
# correctness against float64 and benchmarks. The Markdown table comes last;
# gpu_check.{md,json} land in $OUT when set (else the build folder).
# Usage: bash kernels/bench/gpu_check.sh [--quick] [--skip-bench]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernels="$(cd "$here/.." && pwd)"
build="${ATTNOPT_BUILD_DIR:-$kernels/build/gpu}"
arch="${CUDA_ARCH:-90}"
t0=$(date +%s)
cmake -S "$kernels" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null
cmake --build "$build" -j "$(nproc)" --target attnopt_shared test_cpu
echo "build: $(( $(date +%s) - t0 ))s"
for group in flash window args; do "$build/test_cpu" "$group" >/dev/null; done
echo "CPU tests passed"
python3 "$here/gpu_check.py" --lib "$build/libattnopt.so" --out "${OUT:-$build}" "$@"
