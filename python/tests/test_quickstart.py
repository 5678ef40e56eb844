"""README.md's quickstart, verbatim: its second shell block runs with bash
in a fresh copy of the checkout (a new venv, pip install, rewrite, ONNX
Runtime, validate) and prints what the README shows, `…` standing for
paths and numbers that depend on the machine. It takes minutes (the wheel
builds from source), so it runs only with ATTNOPT_QUICKSTART=1
(scripts/test-python.sh sets it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from readme import matches

README = REPO / "README.md"


def quickstart() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Quickstart\n")
    return text[start:text.index("\n## ", start + 1)]


def block(lang: str, n: int) -> str:
    return re.findall(r"^```" + lang + r"\n(.*?)^```$", quickstart(), flags=re.S | re.M)[n]


def test_matcher():
    assert matches("a … b\nc", "a xyz b\nc") == []
    assert matches("a … b", "a xyz c") != []
    assert matches("a", "a\nextra") != []
    assert matches("CHECK  OUTPUT  …\nsite 0 (s)  out  …  ok", "CHECK\tOUTPUT\tMAX\nsite 0 (s)\tout\t1e-06\t0\tok") == []


def fresh_copy(dst: Path) -> None:
    """The checkout's tracked files, as they are in the work tree."""
    try:
        files = subprocess.check_output(["git", "ls-files", "-z"], cwd=REPO).decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(REPO, dst, ignore=shutil.ignore_patterns(".git", ".cache", "build", ".venv"))
        return
    for f in filter(None, files):
        src = REPO / f
        if src.is_file():
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)


@pytest.mark.skipif(os.environ.get("ATTNOPT_QUICKSTART") != "1", reason="takes minutes: set ATTNOPT_QUICKSTART=1")
def test_quickstart_runs_verbatim(tmp_path):
    checkout = tmp_path / "attnopt"
    fresh_copy(checkout)
    # A new user's shell: no venv active and none of the variables the tests set.
    env = {k: v for k, v in os.environ.items() if k not in (
        "VIRTUAL_ENV", "ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "ATTNOPT_RUNTIME", "ATTNOPT_BINARY", "PYTHONPATH")}
    venv_bin = os.environ.get("VIRTUAL_ENV", "\0") + "/bin"
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block("sh", 1)], cwd=checkout, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    bad = matches(block("text", 0), p.stdout)
    assert not bad, "\n".join(bad) + "\n--- stdout:\n" + p.stdout
