#!/usr/bin/env bash
# attnopt's custom ops on ONNX Runtime's CUDA execution provider, on a lent
# GPU (written for the H200: python3 3.12 with numpy, onnx, nvidia-ml-py and
# the CUDA 13 nvidia-* wheels; nvcc 13; no network). Reads the bundle that
# kernels/bench/ort_gpu_bundle.sh made here in .ortgpu/ (ignored by git).
#
# Procedure (the device tool sends the tracked tree, ~42 MiB, with each call
# and 64 MiB at most, so each call carries one piece of <= 29 MiB; ignored
# files stay on a warm machine, which stays warm only 30 s: make the calls
# back to back). The 1.31.1 bundle is 59 MiB, three pieces of 19.7 MiB:
#   here:   bash kernels/ci.sh (or its CUDA 13 step: kernels/build/cuda13)
#           bash kernels/bench/ort_gpu_bundle.sh
#           bash kernels/bench/ort_gpu_lease.sh rehearse   # the CPU part, here
#   call 1: run(command="bash kernels/bench/ort_gpu_lease.sh stage",
#               carry=[".ortgpu/bundle.part0", ".ortgpu/bundle.sha256"], timeout_s=60)
#   call 2: run(command="bash kernels/bench/ort_gpu_lease.sh stage",
#               carry=[".ortgpu/bundle.part1"], timeout_s=60)
#   call 3: run(command="bash kernels/bench/ort_gpu_lease.sh run",
#               carry=[".ortgpu/bundle.part2"], timeout_s=590)
# (a later bundle with more or fewer pieces: one stage call per piece but
# the last, which goes with `run`; `stage` lists what has arrived.)
# `run` reassembles the pieces and checks every hash, unpacks onnxruntime-gpu
# (trimmed to sm_90) and the models, then, each step under `timeout`, all
# output also in $OUT:
#   1. import, version, providers, libattnopt_ort.so's build;
#   2. ORT's own CUDA kernels on one-node ONNX Attention-23 models against
#      NumPy: is the trimmed fatbin accepted (flash, memory-efficient, unfused);
#   3. attnopt.FlashAttention on the CUDA EP (ort_cuda_check.py, the bundled
#      CUDA 13 library: all architectures, as the wheel ships it);
#   4. bash kernels/bench/gpu_check.sh --quick (builds for sm_90 there);
#   5. the table: each model as original, --target ort and --target attnopt
#      on the CUDA EP (time, peak device memory, error against the original),
#      then the seed models on the CPU EP; Markdown last.
# The limits add up to 560 s of the 590 s call (each step's is its worst
# case; a model slower than 5 s a run is timed once, ort_gpu_table.py).
# Usage: bash kernels/bench/ort_gpu_lease.sh stage|run|rehearse
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="$root/.ortgpu"
out="${OUT:-$bundle/out}"
mkdir -p "$out"
mode="${1:-run}"
dest="${ORTGPU_DIR:-/tmp/ortgpu}"
log="$out/lease_$mode.log"
exec > >(tee -a "$log") 2>&1
t0=$(date +%s)
say() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }

check_pieces() {  # every piece present must match its hash; $1=all: and the whole
  [[ -f "$bundle/bundle.sha256" ]] || { echo "no $bundle/bundle.sha256 (carry it in call 1)"; return 1; }
  local missing=0
  while read -r sum name; do
    [[ "$name" == bundle.tar.xz ]] && continue
    if [[ -f "$bundle/$name" ]]; then
      [[ "$(sha256sum <"$bundle/$name" | cut -d' ' -f1)" == "$sum" ]] || { echo "$name: hash MISMATCH"; return 1; }
      echo "$name: $(du -m "$bundle/$name" | cut -f1) MB, hash ok"
    else
      echo "$name: not here yet"; missing=1
    fi
  done <"$bundle/bundle.sha256"
  [[ "${1:-}" != all ]] && return 0
  [[ $missing == 0 ]] || { echo "pieces missing: make the earlier calls first (warm machine), see the header"; return 1; }
  local want
  want="$(awk '$2 == "bundle.tar.xz" {print $1}' "$bundle/bundle.sha256")"
  [[ "$(cat "$bundle"/bundle.part* | sha256sum | cut -d' ' -f1)" == "$want" ]] || { echo "reassembled bundle: hash MISMATCH"; return 1; }
  echo "reassembled bundle: hash ok"
}

unpack() {
  rm -rf "$dest" && mkdir -p "$dest"
  cat "$bundle"/bundle.part* | xz -d | tar -x -C "$dest" || return 1
  cat "$dest/BUNDLE.txt"
}

case "$mode" in
  stage)
    say "stage: pieces on this machine"
    check_pieces
    exit $? ;;
  rehearse)
    # Here, on the CPU: a Python 3.12 venv stands in for the H200's.
    say "rehearse: pieces and hashes"
    check_pieces all || exit 1
    unpack || exit 1
    py312="${PY312:-$(command -v python3.12 || true)}"
    [[ -x "$py312" ]] || { echo "needs python3.12 (the bundle is cp312)"; exit 1; }
    venv="$bundle/work/venv312"
    [[ -x "$venv/bin/python" ]] || { "$py312" -m venv "$venv" && "$venv/bin/pip" install -q numpy onnx flatbuffers packaging protobuf; }
    export PYTHONPATH="$dest/site"
    say "import and providers"
    timeout 120 "$venv/bin/python" -c 'import onnxruntime as o, ctypes, sys
print("onnxruntime", o.__version__, o.get_device(), o.get_available_providers())
f = ctypes.CDLL(sys.argv[1]).attnopt_ort_build_info; f.restype = ctypes.c_char_p; print(f().decode())' \
      "$dest/attnopt/libattnopt_ort.so" || exit 1
    say "ORT's Attention-23 on the CPU EP (the device runs it on CUDA)"
    timeout 300 "$venv/bin/python" "$root/kernels/bench/ort_gpu_table.py" epcheck --cpu || exit 1
    say "attnopt.FlashAttention with the bundled library: FAILED lines expected here (no CUDA libraries, no GPU), the ops must run on the CPU EP"
    timeout 120 "$venv/bin/python" "$root/kernels/bench/ort_cuda_check.py" --lib "$dest/attnopt/libattnopt_ort.so" | grep -E "providers|rel err"
    say "rehearsal done"
    exit 0 ;;
  run) ;;
  *) echo "usage: $0 stage|run|rehearse"; exit 2 ;;
esac

status=0
step() {  # step SECONDS NAME CMD...: one timed step, its status kept
  local limit="$1" name="$2"; shift 2
  say "$name (limit ${limit}s)"
  timeout "$limit" "$@"; local rc=$?
  [[ $rc == 0 ]] || { echo "-> $name FAILED (exit $rc)"; status=1; }
  return $rc
}
say "pieces and hashes"
check_pieces all || exit 1
step 40 "unpack" unpack || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
export PYTHONPATH="$dest/site${PYTHONPATH:+:$PYTHONPATH}"
lib="$dest/attnopt/libattnopt_ort.so"
step 40 "import and providers" python3 -c 'import onnxruntime as o, ctypes, sys
print("onnxruntime", o.__version__, o.__file__, o.get_available_providers())
f = ctypes.CDLL(sys.argv[1]).attnopt_ort_build_info; f.restype = ctypes.c_char_p; print(f().decode())' "$lib" || exit 1
step 60 "ORT's own CUDA kernels (trimmed fatbin)" python3 "$root/kernels/bench/ort_gpu_table.py" epcheck || exit 1
step 60 "attnopt.FlashAttention on the CUDA EP" python3 "$root/kernels/bench/ort_cuda_check.py" --lib "$lib"
ORT_INCLUDE_DIR="$dest/include" BENCH_LIMIT=40 step 120 "gpu_check.sh --quick" bash "$root/kernels/bench/gpu_check.sh" --quick
step 180 "table, CUDA EP" python3 "$root/kernels/bench/ort_gpu_table.py" table "$dest/models" --lib "$lib" --ep cuda --limit 45 | tee "$out/table_cuda.md"
grep -E '^seed' "$dest/models/models.txt" >"$dest/models/cpu.txt"; cp "$dest/models/models.txt" "$dest/models/all.txt"
cp "$dest/models/cpu.txt" "$dest/models/models.txt"
step 60 "table, CPU EP (seed models)" python3 "$root/kernels/bench/ort_gpu_table.py" table "$dest/models" --lib "$lib" --ep cpu --limit 28 | tee "$out/table_cpu.md"
cp "$dest/models/all.txt" "$dest/models/models.txt"
say "done: $([[ $status == 0 ]] && echo passed || echo FAILED); logs in $out"
exit $status
