#!/usr/bin/env bash
# Makes a virtual environment with ONNX Runtime's transformers optimizer and
# onnxscript from PyPI (bench/.venv), builds attnopt and prints the comparison table.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
if [[ ! -x "$here/.venv/bin/python" ]]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install -q -r "$here/requirements.txt"
fi
(cd "$root" && go build -o attnopt ./cmd/attnopt)
"$here/.venv/bin/python" "$here/ort_optimizer.py" "$root/attnopt"
