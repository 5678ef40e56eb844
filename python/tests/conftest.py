"""Shared paths and fixtures for the package tests (run against the
installed package: scripts/test-python.sh installs ./python into fresh
venvs, with and without onnx and onnxruntime)."""

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


@pytest.fixture(params=["path", "ModelProto"])
def as_model(request):
    """How a test hands a model to the API: as its path, or as an
    onnx.ModelProto loaded from it (skipped when onnx is not installed)."""
    if request.param == "path":
        return lambda p: p
    onnx = pytest.importorskip("onnx")
    return lambda p: onnx.load(str(p))


@pytest.fixture(autouse=True)
def users_environment(monkeypatch, tmp_path):
    """Each test sees what a user of the installed package sees: none of the
    variables scripts/test.sh exports for the Go tests (ONNXRUNTIME_LIB,
    ATTNOPT_DEV…), and a working folder outside the checkout."""
    for v in ("ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "ATTNOPT_RUNTIME", "ATTNOPT_DEV"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.chdir(tmp_path)
