#!/usr/bin/env bash
# CI for kernels/: build the CPU library, the ONNX Runtime custom-op library
# and the tests, run ctest (with ONNX Runtime's real CPU library), print the
# CPU regression A/B against the merge base (bench/cpu_ab.py --quick), then make
# sure every CUDA source compiles for sm_75, sm_80, sm_86 and sm_90 with
# CUDA 13.0's nvcc from PyPI (scripts/install-cuda.sh; no root needed).
# Usage (from anywhere): bash kernels/ci.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${ATTNOPT_BUILD_DIR:-$here/build}"
jobs="$(nproc 2>/dev/null || echo 2)"
stamp() { date +%s; }
t_start=$(stamp)

echo "== kernels: ONNX Runtime library and C API header"
ort_lib="$(bash "$root/scripts/setup-ort.sh")"
echo "ORT library: $ort_lib"
ort_include=""
if command -v go >/dev/null 2>&1; then
  (cd "$root" && go mod download github.com/yalue/onnxruntime_go@v1.27.0)
  ort_include="$(ls -d "$(go env GOMODCACHE)"/github.com/yalue/onnxruntime_go@v1.27.* 2>/dev/null | tail -1)"
fi
if [[ -z "$ort_include" || ! -f "$ort_include/onnxruntime_c_api.h" ]]; then
  echo "error: onnxruntime_c_api.h not found (needs Go and the onnxruntime_go module)" >&2
  exit 1
fi

echo "== kernels: CPU build and tests"
t0=$(stamp)
cmake -S "$here" -B "$build/cpu" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=OFF \
  -DORT_INCLUDE_DIR="$ort_include" -DATTNOPT_ORT_LIBRARY="$ort_lib"
cmake --build "$build/cpu" -j "$jobs"
ctest --test-dir "$build/cpu" --output-on-failure
echo "CPU build + tests: $(( $(stamp) - t0 ))s"

# The CPU library against the merge base on the regression table's small
# sizes (bench/cpu_ab.py): printed for the log, never failing on timing
# (it fails only when this tree's library does).
echo "== kernels: CPU regression A/B (--quick)"
t0=$(stamp)
if command -v python3 >/dev/null 2>&1; then
  python3 "$here/bench/cpu_ab.py" --quick --rounds 5 --build "$build/cpu" --cache "$build/ab"
else
  echo "skipped: python3 not found"
fi
echo "CPU A/B: $(( $(stamp) - t0 ))s"

echo "== kernels: CUDA toolkit"
t0=$(stamp)
cuda_root="$(bash "$here/scripts/install-cuda.sh")"
export PATH="$cuda_root/bin:$PATH"
echo "CUDA toolkit ready ($cuda_root): $(( $(stamp) - t0 ))s"

echo "== kernels: CUDA build for sm_75 sm_80 sm_86 sm_90"
t0=$(stamp)
cmake -S "$here" -B "$build/cuda" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES="75;80;86;90" \
  -DORT_INCLUDE_DIR="$ort_include" -DATTNOPT_ORT_LIBRARY="$ort_lib"
cmake --build "$build/cuda" -j "$jobs"
# No GPU here: the CUDA-enabled libraries must still serve the CPU path.
ctest --test-dir "$build/cuda" --output-on-failure -E cuda_emulated  # the emulation ran above
echo "CUDA build: $(( $(stamp) - t0 ))s"
echo "kernels CI passed in $(( $(stamp) - t_start ))s"
