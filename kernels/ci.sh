#!/usr/bin/env bash
# CI for kernels/: build the CPU library, the ONNX Runtime custom-op library
# and the tests, run ctest (with ONNX Runtime's real CPU library), then build
# the CUDA-enabled libraries with both toolkits and run the CPU tests on them
# (no GPU here: they must load and serve the CPU EP without CUDA):
#  - CUDA 13.0 (scripts/install-cuda.sh, PyPI), the default architectures
#    (SASS sm_75 ... sm_90, PTX compute_90): build/cuda13, the library the
#    wheel packages (scripts/test-python.sh);
#  - CUDA 12.4 (scripts/install-cuda12.sh) for sm_70, which CUDA 13 dropped,
#    and sm_90 with PTX: build/cuda12 (a release build takes the default
#    list, sm_70 ... sm_90; CI compiles the architecture only it adds and
#    the newest, not the four CUDA 13 already compiled).
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

echo "== kernels: CUDA 13 toolkit"
t0=$(stamp)
cuda_root="$(bash "$here/scripts/install-cuda.sh")"
echo "CUDA 13 toolkit ready ($cuda_root): $(( $(stamp) - t0 ))s"

echo "== kernels: CUDA 13 build (default architectures)"
t0=$(stamp)
cmake -S "$here" -B "$build/cuda13" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc" \
  -DORT_INCLUDE_DIR="$ort_include" -DATTNOPT_ORT_LIBRARY="$ort_lib"
cmake --build "$build/cuda13" -j "$jobs"
# No GPU here: the CUDA-enabled libraries must still serve the CPU path.
ctest --test-dir "$build/cuda13" --output-on-failure -E cuda_emulated  # the emulation ran above
bash "$here/scripts/check-sm90a.sh" "$build/cuda13"  # the Hopper path's SASS: HGMMA, UTMALDG
echo "CUDA 13 build: $(( $(stamp) - t0 ))s"

echo "== kernels: CUDA 12 toolkit"
t0=$(stamp)
cuda12_root="$(bash "$here/scripts/install-cuda12.sh")"
echo "CUDA 12 toolkit ready ($cuda12_root): $(( $(stamp) - t0 ))s"

echo "== kernels: CUDA 12 build for sm_70 and sm_90 (+PTX)"
t0=$(stamp)
cmake -S "$here" -B "$build/cuda12" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$cuda12_root/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES="70-real;90" \
  -DORT_INCLUDE_DIR="$ort_include" -DATTNOPT_ORT_LIBRARY="$ort_lib"
cmake --build "$build/cuda12" -j "$jobs" --target attnopt_ort test_ort
ctest --test-dir "$build/cuda12" --output-on-failure -R '^ort_'
echo "CUDA 12 build: $(( $(stamp) - t0 ))s"
echo "kernels CI passed in $(( $(stamp) - t_start ))s"
