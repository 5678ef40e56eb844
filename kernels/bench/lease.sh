#!/usr/bin/env bash
# The whole device check in one 15-minute GPU lease: two back-to-back calls,
# nothing built on the device (plan: issue 35). The two `run` calls, what each
# carries and its time limit:
#
#   here:   bash kernels/ci.sh (CUDA 13 step: kernels/build/cuda13)
#           bash kernels/bench/ort_gpu_bundle.sh        # .ortgpu/bundle.part0, .part1, .sha256
#           bash kernels/bench/lease.sh rehearse        # the CPU part, seconds
#   call 1: bash kernels/bench/lease.sh call1   carry .ortgpu/bundle.part0 + .sha256, timeout_s 300
#           hashes; libattnopt.so out of piece 0 alone (first in the xz stream);
#           wgmma micro-GEMM vs NumPy; correctness of the default path (f32/f16/bf16).
#   call 2: (within 30 s) bash kernels/bench/lease.sh call2   carry .ortgpu/bundle.part1, timeout_s 590
#           reassembly and unpack; ORT's CUDA EP loads and its own Attention-23 matches
#           NumPy; attnopt.FlashAttention on the CUDA EP; the CUDA EP table; the Hopper
#           path's correctness; timings against SDPA flash and cuDNN.
#   `all` runs both halves in one call (a tree small enough to carry the whole bundle).
#   A/B (optional, call 1): each .ortgpu/ab/NAME.so.xz (another build of
#           libattnopt.so for sm_90, e.g. the merge base's: make it with
#           kernels/bench/lease_ab_lib.sh) is timed against the bundle's library by
#           ab_bench.py, in one process; carry .ortgpu/ab too. Tables: $OUT/ab_NAME.md.
#
# Rules every step follows: it runs under `timeout` with its output in $OUT;
# LEASE_DEADLINE_S (seconds from the script's start; default 280 for call1,
# 575 for call2 and all) shortens or skips what no longer fits; no step's
# failure stops the next; the order is the priority (a short lease loses the
# timings first). The exit status is 1 when any step failed or was skipped.
#
# Test hooks (the rehearsal): LEASE_BUNDLE (default .ortgpu), LEASE_WORK
# (default /tmp/lease), LEASE_DRY=1 runs `true` in place of every GPU step,
# LEASE_DRY_FAIL=REGEX makes the dry steps whose name matches fail.
# Usage: bash kernels/bench/lease.sh call1|call2|all|rehearse
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bench="$root/kernels/bench"
mode="${1:-}"
bundle="${LEASE_BUNDLE:-$root/.ortgpu}"
work="${LEASE_WORK:-/tmp/lease}"  # survives between the calls while the machine is warm (30 s)
dest="$work/bundle"               # the unpacked bundle (call 2)
head="$work/head"                 # what piece 0 alone yields (call 1)
out="${OUT:-$work/out}"
dry="${LEASE_DRY:-0}"

if [[ "$mode" == rehearse ]]; then
  exec bash "$bench/lease_rehearse.sh"
fi
case "$mode" in
  call1) deadline=${LEASE_DEADLINE_S:-280} ;;
  call2|all) deadline=${LEASE_DEADLINE_S:-575} ;;
  *) echo "usage: lease.sh call1|call2|all|rehearse" >&2; exit 2 ;;
esac
mkdir -p "$out" "$work/raw"
exec > >(tee "$out/lease_$mode.log") 2>&1
# The trimmed provider (ort_gpu_bundle.sh zeroes kernels no check launches)
# needs lazy loading: a module is read only when one of its kernels runs.
export PYTHONUNBUFFERED=1 CUDA_MODULE_LOADING=LAZY
t0=$(date +%s)
failed=0
say() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }

# run_step GPU LIMIT NAME CMD...: under timeout, shortened to the deadline,
# skipped under 10 s left; a failure is recorded, never fatal. GPU=1 steps
# are the ones LEASE_DRY replaces.
run_step() {
  local gpu="$1" limit="$2" name="$3"; shift 3
  local left=$(( deadline - ($(date +%s) - t0) ))
  if (( left < 10 )); then say "SKIPPED $name (${left}s left)"; failed=1; return 1; fi
  (( limit > left )) && limit=$left
  say "$name (limit ${limit}s)"
  if [[ "$dry" == 1 && "$gpu" == 1 ]]; then
    if [[ -n "${LEASE_DRY_FAIL:-}" && "$name" =~ $LEASE_DRY_FAIL ]]; then set -- false; else set -- true; fi
  fi
  timeout --kill-after=5 "$limit" "$@"
  local rc=$?
  if (( rc != 0 )); then
    say "-> FAILED $name (exit $rc$( (( rc == 124 || rc == 137 )) && echo ', timed out'))"
    failed=1
  fi
  return "$rc"
}
gpu_step() { run_step 1 "$@"; }
cpu_step() { run_step 0 "$@"; }

check_pieces() {  # every piece here must match its hash; $1=whole: all pieces and the whole stream
  [[ -f "$bundle/bundle.sha256" ]] || { echo "no $bundle/bundle.sha256 (carry it in call 1)"; return 1; }
  local sum name bad=0
  while read -r sum name; do
    if [[ "$name" == bundle.tar.xz ]]; then
      [[ "${1:-}" == whole ]] || continue
      [[ "$(cat "$bundle"/bundle.part* | sha256sum | cut -d' ' -f1)" == "$sum" ]] &&
        echo "whole stream: hash ok" || { echo "whole stream: hash MISMATCH (a piece missing: was the machine cold?)"; bad=1; }
    elif [[ -f "$bundle/$name" ]]; then
      [[ "$(sha256sum <"$bundle/$name" | cut -d' ' -f1)" == "$sum" ]] &&
        echo "$name: hash ok" || { echo "$name: hash MISMATCH"; bad=1; }
    else
      echo "$name: not here"; [[ "${1:-}" == whole ]] && bad=1
    fi
  done <"$bundle/bundle.sha256"
  return "$bad"
}

# libattnopt.so from piece 0 alone: the bundle puts it first in the stream,
# and a truncated xz stream still decodes its prefix (xz then exits non-zero,
# hence no pipefail here).
lib_from_piece0() {
  rm -rf "$head" && mkdir -p "$head"
  (set +o pipefail; xz -dc "$bundle/bundle.part0" 2>/dev/null | tar -x -C "$head" attnopt/libattnopt.so 2>/dev/null)
  [[ -s "$head/attnopt/libattnopt.so" ]] && echo "libattnopt.so from piece 0: $(sha256sum <"$head/attnopt/libattnopt.so" | cut -c1-16)"
}
clib() {  # the C ABI library: the unpacked bundle's, else piece 0's
  if [[ -f "$dest/attnopt/libattnopt.so" ]]; then echo "$dest/attnopt/libattnopt.so"; else echo "$head/attnopt/libattnopt.so"; fi
}

device_info() {
  gpu_step 20 "device" nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
}

part_tc() {  # the tensor-core kernels through the C ABI (torch, no ORT)
  local lib; lib="$(clib)"
  gpu_step 60 "micro-GEMM (wgmma + TMA) vs NumPy" python3 "$bench/wgmma_gemm_check.py" --lib "$lib" ||
    say "!! a mismatch means the emulation's reading of wgmma/TMA is wrong (kernels/README.md, Hopper path)"
  correctness auto f32,f16,bf16 _auto 150
  correctness mma f16,bf16 _mma 90  # flash_mma.cu where the default now takes the Hopper kernel
}

part_ab() {  # every carried A/B library against this bundle's (B), after the checks
  local xzf name lib
  for xzf in "$bundle"/ab/*.so.xz; do
    [[ -f "$xzf" ]] || continue
    name="$(basename "$xzf" .so.xz)"
    lib="$work/ab/$name.so"
    mkdir -p "$work/ab" && xz -dc "$xzf" >"$lib" || { say "-> FAILED unpacking $xzf"; failed=1; continue; }
    # flash_mma.cu on both sides (the Hopper kernel has its own timings in call 2).
    gpu_step 90 "A/B: $name (A) against this bundle's libattnopt.so (B), ATTNOPT_CUDA_HOPPER=0" bash -c \
      "ATTNOPT_CUDA_HOPPER=0 python3 '$bench/ab_bench.py' --a '$lib' --b '$(clib)' --rounds 5 > '$out/ab_$name.md'"
    tail -n 12 "$out/ab_$name.md" 2>/dev/null
  done
}

correctness() {  # correctness PATHS DTYPES TAG LIMIT
  gpu_step "$4" "correctness --paths $1 --dtypes $2" python3 "$bench/gpu_check.py" --lib "$(clib)" \
    --out "$work/raw" --skip-bench --quick --paths "$1" --dtypes "$2" --tag "$3"
  cp "$work/raw/gpu_check$3.md" "$out/" 2>/dev/null
}

# The image's torch venv has the CUDA 13 nvidia-* wheels (cuBLAS, cuDNN, ...);
# onnxruntime.preload_dlls() looks only beside the bundle, so without this the
# CUDA EP fails to load and ORT falls back to the CPU with a warning.
nvidia_paths() {
  local sp d p=""
  sp=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null) || return 0
  for d in "$sp"/nvidia/*/lib "$sp"/nvidia/*/*/lib; do [[ -d "$d" ]] && p="$p${p:+:}$d"; done
  echo "$p"
}

part_ort() {  # ONNX Runtime's CUDA EP; returns non-zero when ORT is unusable
  check_pieces whole || { failed=1; return 1; }
  rm -rf "$dest" && mkdir -p "$dest"
  cpu_step 60 "unpack" bash -c "cat '$bundle'/bundle.part* | xz -d | tar -x -C '$dest'" || return 1
  cat "$dest/BUNDLE.txt" 2>/dev/null
  local nv; nv="$(nvidia_paths)"
  export LD_LIBRARY_PATH="$nv${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  local prov="$dest/site/onnxruntime/capi/libonnxruntime_providers_cuda.so"
  echo "ldd not found: $(ldd "$prov" 2>&1 | grep 'not found' | tr -s ' \t\n' ' ' || true)(end)"
  export PYTHONPATH="$dest/site${PYTHONPATH:+:$PYTHONPATH}"
  local lib_ort="$dest/attnopt/libattnopt_ort.so"
  cpu_step 30 "ORT import, providers, libattnopt_ort build" python3 -c 'import onnxruntime as o, ctypes, sys
print("onnxruntime", o.__version__, o.__file__, o.get_available_providers())
f = ctypes.CDLL(sys.argv[1]).attnopt_ort_build_info; f.restype = ctypes.c_char_p; print(f().decode())' "$lib_ort" ||
    { say "ORT unusable: its steps are skipped, the torch-only steps go on"; unset PYTHONPATH; return 1; }
  gpu_step 60 "ORT's own CUDA kernels: Attention-23 vs NumPy (trimmed provider accepted?)" \
    python3 "$bench/ort_gpu_table.py" epcheck
  gpu_step 60 "attnopt.FlashAttention on the CUDA EP (one-node models)" \
    python3 "$bench/ort_cuda_check.py" --lib "$lib_ort"
  gpu_step 170 "table, CUDA EP (original / --target ort / --target attnopt)" bash -c \
    "python3 '$bench/ort_gpu_table.py' table '$dest/models' --lib '$lib_ort' --ep cuda --limit 40 > '$out/table_cuda.md'"
  cat "$out/table_cuda.md" 2>/dev/null
  unset PYTHONPATH
}

part_hopper() {  # the Hopper path, then the timings: last, as a short lease loses them first
  correctness hopper f16,bf16 _hopper 90
  gpu_step 130 "timings: mma, wgmma, SDPA flash, cuDNN (5 interleaved rounds)" \
    python3 "$bench/hopper_bench.py" --lib "$(clib)" --rounds 5 --out "$work/raw"
  cp "$work/raw/hopper_bench.md" "$out/" 2>/dev/null
}

say "lease.sh $mode: deadline ${deadline}s, bundle $bundle, out $out$([[ $dry == 1 ]] && echo ', DRY')"
device_info
case "$mode" in
  call1)
    check_pieces || failed=1
    if lib_from_piece0; then part_tc; part_ab; else say "no libattnopt.so in piece 0: the tensor-core steps cannot run"; failed=1; fi ;;
  call2)
    part_ort
    [[ -s "$(clib)" ]] || lib_from_piece0 || { say "no libattnopt.so"; failed=1; }
    part_hopper ;;
  all)
    part_ort
    [[ -s "$(clib)" ]] || lib_from_piece0 || { say "no libattnopt.so"; failed=1; }
    part_tc
    part_hopper ;;
esac
tar -C "$work/raw" -czf "$out/raw_$mode.tar.gz" . 2>/dev/null
say "lease.sh $mode done: $([[ $failed == 0 ]] && echo 'every step passed' || echo 'some step FAILED or was SKIPPED')"
exit "$failed"
