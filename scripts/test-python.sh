#!/usr/bin/env bash
# CI for the Python package (python/): in a fresh venv, `pip install ./python`
# (builds the Go binary and the custom-op library), then runs python/tests
# with neither onnx nor onnxruntime installed, with onnx (and Polygraphy)
# but no onnxruntime, and with each ONNX Runtime release from PyPI (the
# README example's second block as written, ModelProto models, the rewritten
# fixture in ORT with the library registered, docs/polygraphy.md's recipe).
# Then builds the manylinux wheel (python/build-wheel.sh) and runs the tests
# on it, and last runs README.md's quickstart verbatim with that wheel in a
# fresh copy of the checkout, in a new venv whose PATH has no Go, CMake or
# compiler (python/tests/test_quickstart.py).
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
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
  "$py" -m venv "$tmp/venv"
fi
vpy="$tmp/venv/bin/python"
tests() { "$vpy" -m pytest -q -rs -p no:cacheprovider python/tests --ignore=python/tests/test_quickstart.py; }
# The wheel packages the CUDA-enabled library kernels/ci.sh built (CUDA 13,
# every architecture) rather than compiling the CUDA code a second time; the
# tests then prove it loads and runs the CPU kernels here, without CUDA.
cuda_lib="${ATTNOPT_BUILD_DIR:-kernels/build}/cuda13/libattnopt_ort.so"
if [[ -z "${ATTNOPT_WHEEL_ORT_LIBRARY:-}" && -f "$cuda_lib" ]]; then
  export ATTNOPT_WHEEL_ORT_LIBRARY="$(realpath "$cuda_lib")" ATTNOPT_EXPECT_CUDA_LIBRARY=1
elif [[ -z "${ATTNOPT_WHEEL_ORT_LIBRARY:-}" ]]; then
  # python/build-wheel.sh refuses a wheel without CUDA kernels unless asked.
  echo "note: no $cuda_lib (kernels/ci.sh builds it): the wheels tested here are CPU-only"
  export ATTNOPT_WHEEL_CPU_ONLY=1
fi
echo "== python: pip install ./python ($("$vpy" --version)${ATTNOPT_WHEEL_ORT_LIBRARY:+, library $ATTNOPT_WHEEL_ORT_LIBRARY})"
t0=$(stamp)
"$vpy" -m pip install -q ./python pytest numpy
echo "installed in $(( $(stamp) - t0 ))s"

echo "== python: without onnx and onnxruntime"
tests

echo "== python: with onnx and polygraphy, without onnxruntime"
"$vpy" -m pip install -q onnx==1.20.1 polygraphy==0.53.6
tests

for v in $versions; do
  echo "== python: onnxruntime $v"
  "$vpy" -m pip install -q "onnxruntime==$v"
  "$vpy" -c "import onnxruntime as o, sys; sys.exit(o.__version__ != '$v' and 'onnxruntime ' + o.__version__ + ', not $v')"
  tests
done

echo "== python: manylinux wheel"
whl="$(bash python/build-wheel.sh "$tmp/dist")"
echo "$(basename "$whl")"
"$vpy" -m pip install -q --force-reinstall --no-deps "$whl"
tests

echo "== python: README.md's quickstart, verbatim, with that wheel in a fresh copy of the checkout and no Go, CMake or compiler on PATH"
t0=$(stamp)
ATTNOPT_QUICKSTART_WHEEL="$whl" "$vpy" -m pytest -q -rs -p no:cacheprovider python/tests/test_quickstart.py
echo "quickstart ran in $(( $(stamp) - t0 ))s"
echo "python package CI passed in $(( $(stamp) - t_start ))s"
