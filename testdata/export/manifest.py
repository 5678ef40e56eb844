"""testdata/MANIFEST.json: loading and merging a family's entries.

Kept free of any framework import so that the PyTorch (common.py), JAX
(export_jax.py) and Keras (export_keras.py) family scripts, each in its own
virtual environment, write the one manifest the same way.
"""

from __future__ import annotations

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(os.path.dirname(HERE), "MANIFEST.json")


def load() -> dict:
    if not os.path.exists(MANIFEST):
        return {"torch_version": None, "models": [], "failures": []}
    with open(MANIFEST) as f:
        return json.load(f)


def update(entries: list, failures: list, family: str, torch_version: str | None = None) -> None:
    """Merges one family's entries: replaces models of the same name and the
    failures of the same family; torch_version (the PyTorch fixtures')
    is kept unless given."""
    m = load()
    names = {e["name"] for e in entries}
    if torch_version is not None:
        m["torch_version"] = torch_version
    m["models"] = [e for e in m.get("models", []) if e["name"] not in names] + entries
    m["models"].sort(key=lambda e: e["name"])
    m["failures"] = [f for f in m.get("failures", []) if f.get("family") != family] + failures
    m["failures"].sort(key=lambda f: (f["family"], f["name"]))
    text = json.dumps(m, indent=1)
    # keep short lists of numbers / strings on one line
    text = re.sub(r"\[\s*([-0-9.e\",\s]*?)\s*\]", lambda mo: "[" + re.sub(r"\s*\n\s*", " ", mo.group(1)) + "]", text)
    with open(MANIFEST + ".tmp", "w") as f:
        f.write(text + "\n")
    os.replace(MANIFEST + ".tmp", MANIFEST)
