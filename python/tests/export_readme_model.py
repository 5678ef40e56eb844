"""Regenerates python/tests/readme_model/ by running the first Python block of
README.md's "From Python" section (the PyTorch export) in that folder, with a
fixed seed: model.onnx (+ model.onnx.data) and export_block.sha256 (the
block's hash, which test_readme.py checks). The block's ``feed`` is not kept:
test_readme.py feeds seeded inputs of the same shape.

Needs PyTorch (and onnxscript for its default exporter); CI does not run it.
    python python/tests/export_readme_model.py
"""

from __future__ import annotations

import os

import torch

from readme import EXPORT_HASH, MODEL_DIR, digest, export_block


def main() -> None:
    code = export_block()
    MODEL_DIR.mkdir(exist_ok=True)
    for old in MODEL_DIR.glob("model.onnx*"):
        old.unlink()
    os.chdir(MODEL_DIR)
    torch.manual_seed(0)
    ns: dict = {}
    exec(compile(code, "README.md (From Python, block 1)", "exec"), ns)
    assert set(ns["feed"]) == {"x"}, "the block must set feed for the second block"
    EXPORT_HASH.write_text(digest(code) + "\n", encoding="utf-8")
    print(f"wrote {sorted(p.name for p in MODEL_DIR.iterdir())} with torch {torch.__version__}")


if __name__ == "__main__":
    main()
