#!/usr/bin/env bash
# What libattnopt_ort.so needs and offers (ctest ort_library_deps):
#  - its DT_NEEDED libraries are glibc's and the C++ runtime only: never
#    libcuda.so.1 or libcudart.so.*, so a CUDA build loads on a machine with
#    no CUDA installed (the static runtime dlopens the driver when a CUDA op
#    first runs; test_ort then runs its CPU kernels in ONNX Runtime);
#  - it exports RegisterCustomOps, attnopt_ort_build_info and
#    attnopt_ort_cpu_info (src/ort/build_info.cpp), nothing else;
#  - it carries GPU code (.nv_fatbin) exactly when built with CUDA, and
#    attnopt_ort_build_info says which build it is.
# Usage: ort_library_deps.sh LIBATTNOPT_ORT cuda|cpu
set -euo pipefail
lib="$(realpath "$1")" want="$2"
fail() { echo "FAIL: $lib: $*" >&2; exit 1; }
command -v readelf >/dev/null || { echo "readelf not found (binutils)"; exit 77; }

allowed=" libstdc++.so.6 libm.so.6 libgcc_s.so.1 libc.so.6 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 libdl.so.2 libpthread.so.0 librt.so.1 "
needed="$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
for n in $needed; do
  [[ "$allowed" == *" $n "* ]] || fail "needs $n at load time (allowed:$allowed)"
done
echo "needs: $(echo $needed)"

exports="$(readelf -W --dyn-syms "$lib" | awk '$5 == "GLOBAL" && $7 != "UND" {print $8}' | sed 's/@.*//' | sort -u)"
[[ "$(echo $exports)" == "RegisterCustomOps attnopt_ort_build_info attnopt_ort_cpu_info" ]] || fail "exports: $(echo $exports)"

if readelf -W -S "$lib" | grep -q '\.nv_fatbin'; then has=cuda; else has=cpu; fi
[[ "$has" == "$want" ]] || fail "built as $want but the GPU code says $has"

if command -v python3 >/dev/null; then
  info="$(python3 -c 'import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
for f in lib.attnopt_ort_build_info, lib.attnopt_ort_cpu_info:
  f.restype = ctypes.c_char_p
print(lib.attnopt_ort_build_info().decode() + "|" + lib.attnopt_ort_cpu_info().decode())' "$lib")"
  cpu="${info#*|}" info="${info%%|*}"
  echo "build info: $info; cpu: $cpu"
  [[ "$cpu" =~ ^built=generic[a-z0-9,]*\ supported=generic[a-z0-9,]*\ selected=[a-z0-9]+$ ]] || fail "cpu info '$cpu'"
  case "$want:$info" in
    cuda:"attnopt_ort cuda="[0-9]*" archs="?*) ;;
    cpu:"attnopt_ort cuda=none") ;;
    *) fail "build info '$info' for a $want build" ;;
  esac
fi
echo "ok: $want build, loads without CUDA libraries"
