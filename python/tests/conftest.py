"""Shared paths and fixtures for the package tests (run against the
installed package: scripts/test-python.sh installs ./python into a fresh venv)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAGAN = REPO / "testdata" / "models" / "sagan" / "model.onnx"  # PyTorch export, 256 tokens, input "x"
BERT_DYNAMIC = REPO / "testdata" / "examples" / "bert_block_dynamic.onnx"  # symbolic batch/sequence dims


@pytest.fixture
def sagan(tmp_path: Path) -> Path:
    """A private copy of the SAGAN fixture (rewrite writes beside its input)."""
    p = tmp_path / "sagan.onnx"
    shutil.copy(SAGAN, p)
    return p
