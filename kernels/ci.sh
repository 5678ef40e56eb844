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
#
# Sanitizer stage (issue 24): an AddressSanitizer + UndefinedBehaviorSanitizer
# build (gcc) runs the hostile tables: the C ABI one on the CPU calls and on
# the CUDA emulation, the one-node ORT models in ONNX Runtime 1.24.3 and the
# newest release (scripts/test-ort-compat.sh's version), the regular ORT
# cases, then the fuzz target over its committed corpus and mutations for
# ATTNOPT_FUZZ_SECONDS (default 60). Every step runs even when one fails; a
# failure fails the script at its end, after the other stages ran.
# Usage (from anywhere): bash kernels/ci.sh [--skip-sanitize | --only-sanitize]
set -euo pipefail
mode="${1:-all}"
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

sanitize() {
  local asan="$build/asan" failed=0 t0
  t0=$(stamp)
  local ort_new
  ort_new="$(ORT_VERSION="${ORT_COMPAT_VERSION:-1.30.0}" ORT_CACHE="$root/.cache/ort-compat" bash "$root/scripts/setup-ort.sh")"
  echo "== kernels: ASan + UBSan build"
  # -O1: the sanitized build compiles in about half the time of -O2 here.
  if ! { cmake -S "$here" -B "$asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DATTNOPT_CUDA=OFF -DATTNOPT_SANITIZE=ON \
           -DORT_INCLUDE_DIR="$ort_include" -DATTNOPT_ORT_LIBRARY="$ort_lib" >/dev/null &&
         cmake --build "$asan" -j "$jobs" --target test_cpu test_cuda_emu test_ort test_ort_hostile fuzz_replay attnopt_ort; }; then
    echo "error: the sanitizer build failed" >&2
    return 1
  fi
  echo "sanitizer build: $(( $(stamp) - t0 ))s"
  # Leaks are not checked in ONNX Runtime's process (its own allocations).
  export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
  local step i=0 log
  for step in "cpu_hostile:test_cpu hostile" "cuda_emulated_hostile:test_cuda_emu hostile" \
              "ort_hostile $(basename "$(dirname "$ort_lib")"):test_ort_hostile $asan/libattnopt_ort.so $ort_lib" \
              "ort_hostile $(basename "$(dirname "$ort_new")"):test_ort_hostile $asan/libattnopt_ort.so $ort_new" \
              "ort_custom_ops:test_ort $asan/libattnopt_ort.so $ort_lib" \
              "fuzz ${ATTNOPT_FUZZ_SECONDS:-60}s:fuzz_replay -max_total_time=${ATTNOPT_FUZZ_SECONDS:-60} $here/tests/fuzz/corpus"; do
    local name="${step%%:*}" cmd="${step#*:}" leaks=1
    [[ "$cmd" == test_ort* ]] && leaks=0
    i=$((i + 1))
    log="$asan/sanitize-step$i.log"
    echo "== kernels (ASan + UBSan): $name"
    # shellcheck disable=SC2086  # cmd is a command line
    if ! (cd "$asan" && ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=1" ./$cmd >"$log" 2>&1); then
      tail -n 60 "$log" >&2
      echo "error: sanitizer step $name failed" >&2
      failed=1
    else
      tail -n 1 "$log"
    fi
  done
  echo "sanitizer stage: $(( $(stamp) - t0 ))s"
  return "$failed"
}

if [[ "$mode" == --only-sanitize ]]; then
  sanitize
  exit
fi

echo "== kernels: CPU build and tests"
t0=$(stamp)
cmake -S "$here" -B "$build/cpu" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=OFF \
  -DORT_INCLUDE_DIR="$ort_include" -DATTNOPT_ORT_LIBRARY="$ort_lib"
cmake --build "$build/cpu" -j "$jobs"
ctest --test-dir "$build/cpu" --output-on-failure
echo "CPU build + tests: $(( $(stamp) - t0 ))s"

sanitize_failed=0
if [[ "$mode" != --skip-sanitize ]]; then
  sanitize || sanitize_failed=1
fi

# The CPU library against the merge base (on main: the parent of the last
# kernel change) on the regression table's small sizes, both in one process,
# interleaved, each ratio beside the library's band against a copy of itself
# (bench/cpu_ab.py --pair): printed for the log, never failing on timing; it
# fails when an output differs or this tree's library fails.
echo "== kernels: CPU regression A/B (--quick --pair)"
t0=$(stamp)
if command -v python3 >/dev/null 2>&1; then
  python3 "$here/bench/cpu_ab.py" --quick --pair --rounds 5 --build "$build/cpu" --cache "$build/ab"
else
  echo "skipped: python3 not found"
fi
echo "CPU A/B: $(( $(stamp) - t0 ))s"

# The one-lease device check's flow (kernels/bench/lease.sh, its header)
# on a synthetic bundle: seconds, no GPU, no download.
echo "== kernels: GPU lease rehearsal"
bash "$here/bench/lease.sh" rehearse

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
ctest --test-dir "$build/cuda13" --output-on-failure -E 'cuda_emulated|empty_rows'  # the emulation ran above
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
ctest --test-dir "$build/cuda12" --output-on-failure -R '^ort_(custom_ops|library_deps)$'
echo "CUDA 12 build: $(( $(stamp) - t0 ))s"
if [[ "$sanitize_failed" == 1 ]]; then
  echo "error: the sanitizer stage failed (see above)" >&2
  exit 1
fi
echo "kernels CI passed in $(( $(stamp) - t_start ))s"
