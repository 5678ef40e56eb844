"""Keyword arguments -> CLI flags (attnopt/_flags.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnopt._flags import to_args


@pytest.mark.parametrize(
    "flags, want",
    [
        ({}, []),
        ({"explain": True}, ["--explain"]),
        ({"explain": False, "validate": None}, []),
        ({"memory_budget": "16GiB", "allow_approx": True}, ["--memory-budget", "16GiB", "--allow-approx"]),
        ({"max_error": 0.01, "stride": 2}, ["--max-error", "0.01", "--stride", "2"]),
        ({"window": (8, 8, 8), "shift": [4, 4, 4]}, ["--window", "8x8x8", "--shift", "4x4x4"]),
        ({"dim": {"batch": 1, "seq": 128}}, ["--dim", "batch=1", "--dim", "seq=128"]),
        ({"shape": {"x": (1, 3, 224, 224)}}, ["--shape", "x=1x3x224x224"]),
        ({"shape": ["x=1x3x8x8", "y=1x8"]}, ["--shape", "x=1x3x8x8", "--shape", "y=1x8"]),
        ({"report": Path("out") / "r.md"}, ["--report", "out/r.md"]),
    ],
)
def test_to_args(flags, want):
    assert to_args(flags) == want


@pytest.mark.parametrize("bad", [object(), {"x": object()}, [True]])
def test_to_args_rejects(bad):
    with pytest.raises(TypeError):
        to_args({"grid": bad})
