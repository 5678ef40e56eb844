#!/usr/bin/env bash
# Unpacks ONNX Runtime's CPU shared library (linux-x64) from the npm package
# onnxruntime-node into .cache/ort/, so tests and the ORT backend can load it.
# Prints the library path. Idempotent: does nothing when it is already there.
# ORT_VERSION picks the version (default 1.24.3, the pinned one); ORT_CACHE
# the folder (default .cache/ort, which eval/ort searches, newest first, in
# development mode, ATTNOPT_DEV=1; the compatibility run unpacks other
# versions elsewhere so that a plain `go test` keeps finding the pinned one).
set -euo pipefail
ORT_VERSION="${ORT_VERSION:-1.24.3}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${ORT_CACHE:-$root/.cache/ort}/$ORT_VERSION"
lib="$dest/libonnxruntime.so.1"
if [[ ! -f "$lib" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
  tar -xzf "$tmp"/onnxruntime-node-*.tgz -C "$tmp" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
  mkdir -p "$dest"
  cp "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$lib.tmp"
  mv "$lib.tmp" "$lib"
fi
echo "$lib"
