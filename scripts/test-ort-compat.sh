#!/usr/bin/env bash
# The Go ONNX Runtime backend's tests (eval/ort) and `attnopt validate
# --runtime ort` on rewritten fixtures against the newest onnxruntime-node
# release's library as well as the pinned one that scripts/test.sh uses. The
# library is unpacked into .cache/ort-compat/, not .cache/ort/, so a plain
# `go test` keeps finding the pinned version. Needs the custom-op library
# built first (kernels/ci.sh) for the attnopt-target cases. About 30 s here.
# ORT_COMPAT_VERSION overrides the version.
set -euo pipefail
cd "$(dirname "$0")/.."
export ATTNOPT_DEV=1 # the custom-op library from this checkout's kernels/build (eval/ort/find.go)
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
# eval/ort: the backend's own tests (ONNX backend cases, fixtures, custom ops).
ONNXRUNTIME_LIB="$lib" go test -count=1 ./eval/ort
# The CLI's path through it: rewritten fixtures, both fused-op targets, end to
# end in this ORT. (validate's tests also load ORT, but take about 3 minutes
# here, mostly in the Go runtime: scripts/test.sh runs them with 1.24.3.)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/attnopt" ./cmd/attnopt
for model in sagan hf_bert sdpa_h16d4 cond_if_dynamo loop_script; do
  for target in attnopt ort; do
    src="testdata/models/$model/model.onnx"
    "$tmp/attnopt" rewrite "$src" --target "$target" -o "$tmp/$model.$target.onnx" --min-scores 0 >/dev/null  # tiny fixtures: fuse them all
    "$tmp/attnopt" validate "$src" "$tmp/$model.$target.onnx" --runtime ort --scope model --ort-lib "$lib"
  done
done
