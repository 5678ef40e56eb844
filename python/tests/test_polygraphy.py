"""docs/polygraphy.md's recipe, as written: the script runs the original
and the attnopt rewrite in Polygraphy's ONNX Runtime runner (the rewrite's
session with attnopt's library registered) and passes, fails on a broken
rewrite, and the saved outputs pass `polygraphy run --load-outputs`."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attnopt
from conftest import REPO, SAGAN

DOC = REPO / "docs" / "polygraphy.md"


def block(lang: str) -> str:
    (code,) = re.findall(r"^```" + lang + r"\n(.*?)^```$", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)
    return code


@pytest.fixture
def workdir(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("polygraphy")
    shutil.copy(SAGAN, tmp_path / "model.onnx")
    attnopt.rewrite(tmp_path / "model.onnx")
    (tmp_path / "compare.py").write_text(block("python"), encoding="utf-8")
    return tmp_path


def test_recipe_passes(workdir):
    bin_dir = Path(sys.executable).parent
    for line in block("sh").splitlines():
        # The page's commands, with this venv's python and polygraphy.
        cmd = line.split()
        cmd[0] = sys.executable if cmd[0] == "python" else str(bin_dir / cmd[0])
        p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
        assert p.returncode == 0, f"{line}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        assert "PASSED" in p.stdout + p.stderr, p.stdout + p.stderr
    assert (workdir / "outputs.json").is_file()


def test_recipe_fails_on_a_broken_rewrite(workdir):
    onnx = pytest.importorskip("onnx")
    m = onnx.load(str(workdir / "model.attnopt.onnx"))
    (fa,) = [n for n in m.graph.node if n.op_type == "FlashAttention"]
    (scale,) = [a for a in fa.attribute if a.name == "scale"]
    scale.f *= 2
    onnx.save(m, str(workdir / "model.attnopt.onnx"))
    p = subprocess.run([sys.executable, "compare.py"], cwd=workdir, capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILED" in p.stdout + p.stderr
