#!/usr/bin/env bash
# The Go ONNX Runtime backend's tests (eval/ort, and validate, which runs
# models through it) and `attnopt validate --runtime ort` against the newest
# onnxruntime-node release's library as well as the pinned one that
# scripts/test.sh uses (cmd/attnopt's tests never load ORT). The library is
# unpacked into .cache/ort-compat/, not .cache/ort/, so a plain `go test`
# keeps finding the pinned version. Needs the custom-op library built first
# (kernels/ci.sh) for the attnopt-target cases.
# ORT_COMPAT_VERSION overrides the version.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${ORT_COMPAT_VERSION:-1.30.0}"
lib="$(ORT_VERSION="$version" ORT_CACHE="$PWD/.cache/ort-compat" bash scripts/setup-ort.sh)"
echo "== Go ONNX Runtime backend against onnxruntime-node $version ($lib)"
# A library that fails to load makes eval/ort's tests skip: prove it loaded.
loaded="$(ONNXRUNTIME_LIB="$lib" go test -count=1 -run 'TestReuseAndConcurrency$' -v ./eval/ort)"
echo "$loaded"
if ! grep -q "ONNX Runtime $version from" <<<"$loaded"; then
  echo "error: ONNX Runtime $version did not load" >&2
  exit 1
fi
# eval/ort and validate are the packages whose tests run ONNX Runtime.
ONNXRUNTIME_LIB="$lib" go test -count=1 ./eval/ort ./validate
# And the CLI's own path: a rewritten fixture end to end in this ORT.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/attnopt" ./cmd/attnopt
"$tmp/attnopt" rewrite testdata/models/sagan/model.onnx -o "$tmp/sagan.attnopt.onnx"
"$tmp/attnopt" validate testdata/models/sagan/model.onnx "$tmp/sagan.attnopt.onnx" \
  --runtime ort --scope model --ort-lib "$lib"
