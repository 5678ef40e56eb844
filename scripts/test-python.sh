#!/usr/bin/env bash
# CI for the Python package (python/): in a fresh venv, `pip install ./python`
# (builds the Go binary and the custom-op library), checks that attnopt
# imports and works without onnxruntime, then for each ONNX Runtime release
# from PyPI installs it and runs python/tests (the README example's second
# block as written, and the rewritten fixture in ORT with the library
# registered, compared with the original). Last, builds the manylinux wheel
# (python/build-wheel.sh) and runs the tests on it.
# ATTNOPT_PY_ORT_VERSIONS overrides the versions (pinned first, newest last).
set -euo pipefail
cd "$(dirname "$0")/.."
versions="${ATTNOPT_PY_ORT_VERSIONS:-1.24.3 1.31.1 1.32.0}"
py="${PYTHON:-python3}"
stamp() { date +%s; }
t_start=$(stamp)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! "$py" -m venv "$tmp/venv" >/dev/null 2>&1; then
  # Debian's system Python keeps venv in a separate package.
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  "$py" -m venv "$tmp/venv"
fi
vpy="$tmp/venv/bin/python"
# The wheel packages the CUDA-enabled library kernels/ci.sh built (CUDA 13,
# every architecture) rather than compiling the CUDA code a second time; the
# tests then prove it loads and runs the CPU kernels here, without CUDA.
cuda_lib="${ATTNOPT_BUILD_DIR:-kernels/build}/cuda13/libattnopt_ort.so"
if [[ -z "${ATTNOPT_WHEEL_ORT_LIBRARY:-}" && -f "$cuda_lib" ]]; then
  export ATTNOPT_WHEEL_ORT_LIBRARY="$(realpath "$cuda_lib")" ATTNOPT_EXPECT_CUDA_LIBRARY=1
fi
echo "== python: pip install ./python ($("$vpy" --version)${ATTNOPT_WHEEL_ORT_LIBRARY:+, library $ATTNOPT_WHEEL_ORT_LIBRARY})"
t0=$(stamp)
"$vpy" -m pip install -q ./python pytest numpy
echo "installed in $(( $(stamp) - t0 ))s"

echo "== python: without onnxruntime"
"$vpy" -m pytest -q -p no:cacheprovider python/tests

for v in $versions; do
  echo "== python: onnxruntime $v"
  "$vpy" -m pip install -q "onnxruntime==$v"
  "$vpy" -c "import onnxruntime as o, sys; sys.exit(o.__version__ != '$v' and 'onnxruntime ' + o.__version__ + ', not $v')"
  "$vpy" -m pytest -q -p no:cacheprovider python/tests
done

echo "== python: manylinux wheel"
whl="$(bash python/build-wheel.sh "$tmp/dist")"
echo "$(basename "$whl")"
"$vpy" -m pip install -q --force-reinstall --no-deps "$whl"
"$vpy" -m pytest -q -p no:cacheprovider python/tests
echo "python package CI passed in $(( $(stamp) - t_start ))s"
