#!/usr/bin/env bash
# GPU check for a machine with one GPU (written for an H200: nvcc, CMake and
# PyTorch present, no network): builds the kernels for sm_90 (override with
# CUDA_ARCH=80 etc.), runs the CPU tests, then bench/gpu_check.py in three
# separate processes, so a kernel fault in one (which kills the CUDA context)
# does not hide the results of the others:
#   1. correctness of the SIMT kernel (every dtype),
#   2. correctness of the default path for f16/bf16 (tensor cores on sm_80+),
#   3. benchmarks; their Markdown table is printed last;
# and, when ORT_INCLUDE_DIR names a folder with onnxruntime_c_api.h, the
# custom-op library once through ONNX Runtime's CUDA EP (ort_cuda_check.py).
# Each step has a time limit, so a hung kernel cannot eat the whole lease.
# gpu_check*.{md,json} land in $OUT when set (else the build folder).
# Usage: bash kernels/bench/gpu_check.sh [--quick]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernels="$(cd "$here/.." && pwd)"
build="${ATTNOPT_BUILD_DIR:-$kernels/build/gpu}"
out="${OUT:-$build}"
arch="${CUDA_ARCH:-90}"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader || true
nvcc --version | tail -1
ort_opt=()
[[ -n "${ORT_INCLUDE_DIR:-}" ]] && ort_opt=(-DORT_INCLUDE_DIR="$ORT_INCLUDE_DIR")
cmake -S "$kernels" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" "${ort_opt[@]}" >/dev/null || exit 1
targets=(attnopt_shared test_cpu)
[[ -n "${ORT_INCLUDE_DIR:-}" ]] && targets+=(attnopt_ort)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" 2>&1 | grep -Ei "warning|error|spill" | head -20
[[ -f "$build/libattnopt.so" ]] || { echo "build failed"; exit 1; }
echo "build: $(( $(date +%s) - t0 ))s"
if command -v cuobjdump >/dev/null; then
  sass="$(cuobjdump --dump-sass "$build/libattnopt.so" 2>/dev/null)"
  echo "SASS: $(grep -c HMMA <<<"$sass") HMMA, $(grep -cE 'LDL|STL' <<<"$sass") LDL/STL, $(grep -c MUFU.EX2 <<<"$sass") MUFU.EX2"
fi
for group in flash window args; do "$build/test_cpu" "$group" >/dev/null || { echo "CPU test $group failed"; exit 1; }; done
echo "CPU tests passed"
py=(python3 "$here/gpu_check.py" --lib "$build/libattnopt.so" --out "$out")
status=0
timeout 150 "${py[@]}" --paths simt --skip-bench --tag _simt "$@" || status=1
timeout 120 "${py[@]}" --paths auto --dtypes f16,bf16 --skip-bench --tag _auto "$@" || status=1  # f32 is SIMT either way
if [[ -n "${ORT_INCLUDE_DIR:-}" ]]; then
  timeout 60 python3 "$here/ort_cuda_check.py" --lib "$build/libattnopt_ort.so" || status=1
fi
timeout "${BENCH_LIMIT:-240}" "${py[@]}" --skip-correctness --tag _bench "$@" || status=1
echo "gpu_check: total $(( $(date +%s) - t0 ))s, $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
