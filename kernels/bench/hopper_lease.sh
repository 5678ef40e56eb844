#!/usr/bin/env bash
# The device check of issue 22 for one lease on an H100/H200 (nvcc, CMake,
# PyTorch and Triton on the machine; no network). Under 9.5 minutes, every
# step under `timeout`, everything written to $OUT (8 files at most come back):
#   1. build libattnopt for sm_90 + the sm_90a Hopper objects (-Xptxas -v
#      report and the SASS counts: HGMMA, UTMALDG, LDL/STL);
#   2. the micro-GEMM against NumPy (wgmma_gemm_check.py): a mismatch means
#      this project's reading of the PTX ISA, shared by the CPU emulation and
#      the kernels, is wrong: fix the emulator first;
#   3. correctness against float64 (gpu_check.py, quick matrix plus sliding
#      windows and tile-level bool masks): the Hopper path
#      (ATTNOPT_CUDA_HOPPER=1; it falls back to the tensor-core kernel outside
#      its cover), then the default path;
#   4. timings in one process with interleaved rounds (hopper_bench.py):
#      attnopt's two kernels against SDPA flash and cuDNN, the bf16 GEMM
#      peak, the masked d 4 seed case, the ring depths; then Triton
#      (flex_attention) at bf16 d 128 N 16384 with its own time limit.
# A step that fails or times out is reported and the next one still runs.
# Run from the repository root: bash kernels/bench/hopper_lease.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernels="$(cd "$here/.." && pwd)"
out="${OUT:-/tmp/hopper_lease}"
build=/tmp/attnopt_hopper_build
work=/tmp/attnopt_hopper_out  # everything; the tables and a tarball go to $out
mkdir -p "$out" "$work"
log="$out/lease.log"
exec > >(tee "$log") 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }
status=0
step() {  # step NAME LIMIT_S COMMAND...: runs it under timeout, records the outcome
  local name="$1" limit="$2"
  shift 2
  echo "== $name (limit ${limit}s, at $(elapsed))"
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  [[ $rc == 124 || $rc == 137 ]] && echo "!! $name: timed out after ${limit}s"
  [[ $rc != 0 ]] && { echo "!! $name: exit $rc"; status=1; }
  return $rc
}

timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
timeout 20 nvcc --version | tail -1

step "build (sm_90 + sm_90a)" 240 bash -c "
  cmake -S '$kernels' -B '$build' -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON -DATTNOPT_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS=-Xptxas=-v >/dev/null &&
  cmake --build '$build' -j \"\$(nproc)\" --target attnopt_shared > '$work/build.log' 2>&1" || {
  tail -30 "$work/build.log"
  echo "build failed: nothing else can run"
  exit 1
}
echo "ptxas, Hopper kernels (bf16 d64, d128; f16 d64, d128; GEMMs):"
grep -A3 -E "Compiling entry function.*wgmma_(attention|gemm)_kernel" "$work/build.log" | grep -E "Used|spill" | head -16
if command -v cuobjdump >/dev/null; then
  for o in $(find "$build" -path "*sm90a_objs.dir*" -name "*.cu.o"); do
    s="$(timeout 60 cuobjdump --dump-sass "$o")"
    echo "SASS $(basename "$o"): $(grep -c 'HGMMA\.' <<<"$s") HGMMA, $(grep -c UTMALDG <<<"$s") UTMALDG," \
      "$(grep -cE '\b(LDL|STL)\b' <<<"$s") LDL/STL, $(grep -c USETMAXREG <<<"$s") USETMAXREG"
  done
fi
lib="$build/libattnopt.so"

step "micro-GEMM vs NumPy" 90 python3 "$here/wgmma_gemm_check.py" --lib "$lib" ||
  echo "!! the micro-GEMM disagrees with NumPy: the emulation's reading of wgmma/TMA is wrong; fix it first"

py=(python3 "$here/gpu_check.py" --lib "$lib" --out "$work" --dtypes f16,bf16 --skip-bench --quick)
step "correctness, Hopper path" 110 "${py[@]}" --paths hopper --tag _hopper
step "correctness, default path" 100 "${py[@]}" --paths auto --tag _auto

step "timings" 130 python3 "$here/hopper_bench.py" --lib "$lib" --rounds 5 --out "$work"
left=$(( 560 - ($(date +%s) - t0) ))
if (( left > 60 )); then
  step "timings with Triton" "$left" python3 "$here/hopper_bench.py" --lib "$lib" --rounds 5 --out "$work" \
    --triton --only "bf16 H16 d128 N16384" --tag _triton
else
  echo "== Triton skipped: ${left}s left"
fi
echo "== lease: $(elapsed), $([[ $status == 0 ]] && echo 'every step passed' || echo 'some step FAILED')"
cp "$work"/*.md "$out"/ 2>/dev/null
tar -C "$work" -czf "$out/raw.tar.gz" . 2>/dev/null
for f in "$out"/gpu_check_*.md "$out"/hopper_bench*.md; do [[ -f $f ]] && { echo "--- $(basename "$f")"; cat "$f"; }; done
exit $status
