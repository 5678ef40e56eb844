#!/usr/bin/env bash
# Regenerates every fixture under testdata/models and testdata/MANIFEST.json.
#
#   testdata/export/regen.sh            # all families
#   testdata/export/regen.sh timm sdpa  # only these families (others are kept)
#
# Creates a virtual environment at testdata/export/.venv (or $VENV) from PyPI
# with the pinned versions in requirements.txt (PyTorch from PyPI brings its
# CUDA wheels: a few GB to download; no GPU is needed).  CPU only, about 5
# minutes on 2 cores after the install.  CI does not run this.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${VENV:-$HERE/.venv}"
PYTHON="${PYTHON:-python3}"
FAMILIES=(cpa3d progan sdpa timm monai diffusers transformers decoders swinv2 negatives lift nested dynamic kvheads ortopt causal softcap)

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"

if [ "$#" -gt 0 ]; then
    FAMILIES=("$@")
else
    # full regeneration: start from nothing so no stale fixture survives
    rm -rf "$HERE/../models" "$HERE/../MANIFEST.json"
fi
mkdir -p "$HERE/../models"

export PYTHONHASHSEED=0
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
cd "$HERE"
status=0
for fam in "${FAMILIES[@]}"; do
    echo "=== family $fam" >&2
    # a family exits 1 when a case fails that is not a known failure
    "$VENV/bin/python" "export_${fam}.py" || status=1
done

"$VENV/bin/python" - <<'PY'
import json, os
m = json.load(open("../MANIFEST.json"))
total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk("../models") for f in fs)
print(f"{len(m['models'])} models, {total / 2**20:.1f} MiB under testdata/models; "
      f"{len(m['failures'])} recorded failures")
PY
"$VENV/bin/python" update_readme.py
exit "$status"
