"""README.md's quickstart, verbatim: its second shell block runs with bash
in a fresh copy of the checkout holding the attnopt wheel (a new venv, pip
install of the wheel and onnxruntime, rewrite, ONNX Runtime, validate),
with a PATH that has no Go, CMake or compiler, and prints what the README
shows, `…` standing for paths and numbers that depend on the machine. It
needs the wheel python/build-wheel.sh made: ATTNOPT_QUICKSTART_WHEEL
names it (scripts/test-python.sh sets it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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


# What the block runs besides the venv's own commands (attnopt, pip, python3).
TOOLS = ["bash", "python3", "cp", "env", "uname"]
# What a machine without a toolchain lacks; the block must not need any of it.
TOOLCHAIN = ["go", "cmake", "cc", "gcc", "c++", "g++", "clang", "nvcc", "make", "ld"]


def bare_path(dst: Path) -> str:
    """A PATH of one folder holding only TOOLS (links to this machine's)."""
    dst.mkdir()
    for t in TOOLS:
        # python3: the interpreter behind the tests' venv, not the venv's own.
        exe = getattr(sys, "_base_executable", sys.executable) if t == "python3" else shutil.which(t)
        if exe:
            (dst / t).symlink_to(os.path.realpath(exe))
    return str(dst)


@pytest.mark.skipif(not os.environ.get("ATTNOPT_QUICKSTART_WHEEL"),
                    reason="needs the wheel python/build-wheel.sh made: set ATTNOPT_QUICKSTART_WHEEL")
def test_quickstart_runs_verbatim(tmp_path):
    checkout = tmp_path / "attnopt"
    fresh_copy(checkout)
    wheel = Path(os.environ["ATTNOPT_QUICKSTART_WHEEL"])
    shutil.copy(wheel, checkout / wheel.name)  # as downloaded from a release into the checkout
    # A new user's shell: no venv active, none of the variables the tests
    # set, and no toolchain on PATH.
    env = {k: v for k, v in os.environ.items() if k not in (
        "VIRTUAL_ENV", "ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "ATTNOPT_RUNTIME", "ATTNOPT_BINARY",
        "PYTHONPATH", "GOROOT", "CC", "CXX", "CUDACXX", "ATTNOPT_DEV")}
    env["PATH"] = bare_path(tmp_path / "bin")
    for t in TOOLCHAIN:
        assert shutil.which(t, path=env["PATH"]) is None, f"{t} is on the quickstart's PATH"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block("sh", 1)], cwd=checkout, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    bad = matches(block("text", 0), p.stdout)
    assert not bad, "\n".join(bad) + "\n--- stdout:\n" + p.stdout
