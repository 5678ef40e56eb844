#!/usr/bin/env bash
# `lease.sh rehearse`: what a CPU can check of kernels/bench/lease.sh, in
# seconds and without downloads (kernels/ci.sh runs it). It plays the two
# device calls as the machine sees them: call 1 with piece 0 and the hashes
# only, call 2 with piece 1 added, GPU steps replaced by `true`
# (LEASE_DRY=1). On .ortgpu/'s real bundle when it is there (the import then
# needs the bundle's Python, 3.12: LEASE_PY), else on a small synthetic one
# built here with the same layout: attnopt/ first, a stand-in `onnxruntime`
# package, an incompressible provider so the stream spans two pieces.
# Checks: the hashes, libattnopt.so out of piece 0 alone, the whole-stream
# hash, the unpack, the import, a step's failure not stopping the next, the
# deadline skipping what no longer fits, a corrupted piece named.
# Prints "lease rehearsal: PASS" or "lease rehearsal: FAIL (...)"; exit 0/1.
set -uo pipefail
bench="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$bench/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=()
check() {  # check DESCRIPTION COMMAND...: records a failure, never stops
  local what="$1"; shift
  if "$@"; then echo "  ok: $what"; else echo "  FAIL: $what"; fails+=("$what"); fi
}
has() { grep -qE -- "$2" "$1"; }

src="$root/.ortgpu"
py_ok() { "${LEASE_PY:-python3}" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; }
if [[ -f "$src/bundle.sha256" && -f "$src/bundle.part1" ]] && ! py_ok; then
  echo "a real bundle is in $src, but its import needs Python 3.12 (LEASE_PY): rehearsing on a synthetic one"
  src="/nonexistent"
fi
if [[ -f "$src/bundle.sha256" && -f "$src/bundle.part1" ]]; then
  echo "rehearsing on the real bundle in $src"
else
  echo "no real bundle in $src: rehearsing on a synthetic one"
  src="$tmp/synthetic"; stage="$tmp/stage"
  mkdir -p "$src" "$stage/attnopt" "$stage/models" "$stage/site/onnxruntime/capi"
  head -c 200000 /dev/urandom >"$stage/attnopt/libattnopt.so"
  head -c 100000 /dev/urandom >"$stage/attnopt/libattnopt_ort.so"
  head -c 600000 /dev/urandom >"$stage/site/onnxruntime/capi/libonnxruntime_providers_cuda.so"
  printf '__version__ = "0.0-synthetic"\ndef get_available_providers():\n    return ["CPUExecutionProvider"]\n' \
    >"$stage/site/onnxruntime/__init__.py"
  printf '# name\tvariants\tnote\n' >"$stage/models/models.txt"
  echo "synthetic bundle (lease_rehearse.sh)" >"$stage/BUNDLE.txt"
  # attnopt/ first, as ort_gpu_bundle.sh writes it; xz -0 keeps it quick.
  tar -C "$stage" -cf - attnopt BUNDLE.txt models site | xz -0 >"$tmp/bundle.tar.xz"
  size=$(stat -c %s "$tmp/bundle.tar.xz")
  split -b $(( (size + 1) / 2 )) -d -a 1 "$tmp/bundle.tar.xz" "$src/bundle.part"
  (cd "$src" && sha256sum bundle.part* >bundle.sha256 &&
    echo "$(sha256sum <"$tmp/bundle.tar.xz" | cut -d' ' -f1)  bundle.tar.xz" >>bundle.sha256)
  want_lib="$(sha256sum <"$stage/attnopt/libattnopt.so" | cut -c1-16)"
fi

# The stand-in C ABI of the synthetic libattnopt_ort.so cannot be loaded:
# the import step's ctypes line is run for the real bundle only.
bin="$tmp/bin"; mkdir -p "$bin"
if [[ -n "${LEASE_PY:-}" ]]; then
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$LEASE_PY" >"$bin/python3"  # a wrapper: a symlink loses a venv
else
  real_py="$(command -v python3)"
  printf '#!/bin/sh\ncase "$2" in *attnopt_ort_build_info*) [ -f "$3" ] && exec "%s" -c "import onnxruntime as o; print(o.__version__)";; esac\nexec "%s" "$@"\n' \
    "$real_py" "$real_py" >"$bin/python3"
fi
chmod +x "$bin/python3"
export PATH="$bin:$PATH" LEASE_DRY=1

lease() {  # lease MODE LOG [VAR=VALUE ...]: one call as the device sees it
  local m="$1" log="$2"; shift 2
  env "$@" LEASE_BUNDLE="$tmp/device" LEASE_WORK="$tmp/work" OUT="$tmp/out" \
    timeout 60 bash "$bench/lease.sh" "$m" >"$log" 2>&1
}

echo "call 1: piece 0 and the hashes"
mkdir -p "$tmp/device"
cp "$src/bundle.part0" "$src/bundle.sha256" "$tmp/device/"
lease call1 "$tmp/call1.log"; rc1=$?
check "call 1: piece 0's hash" has "$tmp/call1.log" '^bundle.part0: hash ok'
check "call 1: piece 1 reported absent" has "$tmp/call1.log" '^bundle.part1: not here'
check "call 1: libattnopt.so out of piece 0 alone" has "$tmp/call1.log" "libattnopt.so from piece 0: ${want_lib:-[0-9a-f]}"
check "call 1: the tensor-core steps reached" has "$tmp/call1.log" 'correctness --paths auto'
check "call 1: its log in \$OUT" test -s "$tmp/out/lease_call1.log"

echo "call 2: piece 1 added, a step failing"
cp "$src/bundle.part1" "$tmp/device/"
lease call2 "$tmp/call2.log" LEASE_DRY_FAIL='^ORT.s own'; rc2=$?
check "call 2: the whole stream's hash" has "$tmp/call2.log" '^whole stream: hash ok'
check "call 2: unpacked" test -f "$tmp/work/bundle/BUNDLE.txt"
check "call 2: the ldd line" has "$tmp/call2.log" '^ldd not found: '
check "call 2: the import (the unpacked package's version)" has "$tmp/call2.log" '^(0\.0-synthetic|onnxruntime [0-9])' 
check "call 2: a failed step is reported" has "$tmp/call2.log" "FAILED ORT's own"
check "call 2: the steps after it still run" has "$tmp/call2.log" 'timings: mma'
check "call 2: a failure makes the exit status 1" test "$rc2" = 1
[[ -n "${LEASE_PY:-}" || -n "${want_lib:-}" ]] && check "call 1: every step passed" test "$rc1" = 0

echo "call 2 near the deadline"
lease call2 "$tmp/late.log" LEASE_DEADLINE_S=13
check "deadline: a limit shortened to what is left" has "$tmp/late.log" 'device \(limit 1[0-3]s\)'
lease call2 "$tmp/gone.log" LEASE_DEADLINE_S=9
check "deadline: steps skipped under 10 s left" has "$tmp/gone.log" 'SKIPPED timings'
check "deadline: nothing started" bash -c "! grep -q 'limit [0-9]*s)' '$tmp/gone.log'"

echo "a corrupted piece"
printf 'x' | dd of="$tmp/device/bundle.part1" bs=1 seek=100 conv=notrunc status=none
lease call2 "$tmp/bad.log"
check "corruption: the piece named" has "$tmp/bad.log" '^bundle.part1: hash MISMATCH'

if (( ${#fails[@]} == 0 )); then
  echo "lease rehearsal: PASS"
else
  echo "lease rehearsal: FAIL (${fails[*]})"
  for f in "$tmp"/*.log; do echo "--- $f"; tail -25 "$f"; done
  exit 1
fi
