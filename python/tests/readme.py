"""The code blocks of README.md's "From Python" section, for the test that
runs them and for the script that exports python/tests/readme_model/."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import List

README = Path(__file__).resolve().parents[2] / "README.md"
MODEL_DIR = Path(__file__).resolve().parent / "readme_model"
EXPORT_HASH = MODEL_DIR / "export_block.sha256"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## From Python\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def blocks(lang: str) -> List[str]:
    """The fenced blocks of the section in language ``lang``, in order."""
    return re.findall(r"^```" + lang + r"\n(.*?)^```$", section(), flags=re.S | re.M)


def export_block() -> str:
    """The PyTorch part: defines the model, writes model.onnx, sets ``feed``."""
    return blocks("python")[0]


def api_block() -> str:
    """The attnopt + onnxruntime part, which reads model.onnx and ``feed``."""
    return blocks("python")[1]


def printed() -> str:
    """What the README says the two blocks print."""
    return blocks("text")[0]


def digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def pattern(line: str) -> str:
    """A README line as a regular expression: … matches anything, and a
    column gap (two spaces or more) the gap of an aligned table or the tab
    of a piped one."""
    return ".*".join("[ \t]+".join(re.escape(w) for w in re.split("  +", p)) for p in line.split("…"))


def matches(want: str, got: str) -> List[str]:
    """The lines of want (… matches anything) that got does not match, in
    order; [] when every line matches and nothing is left over."""
    wl, gl = want.splitlines(), got.splitlines()
    bad = [f"want {w!r}\n got {g!r}" for w, g in zip(wl, gl) if not re.fullmatch(pattern(w), g)]
    if len(wl) != len(gl):
        bad.append(f"{len(gl)} lines, want {len(wl)}")
    return bad
