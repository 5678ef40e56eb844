"""Keyword arguments checked against the command's own flags before a run,
so that a misspelled one is a TypeError naming the close match (as Python
does for a function's parameters), not the binary's usage error."""

from __future__ import annotations

import difflib
import functools
import re
import subprocess
from typing import FrozenSet, Iterable, Mapping

from ._binary import binary_path

# A flag line of cobra's --help: "      --memory-budget string   ..." or "  -o, --output string ...".
_FLAG_LINE = re.compile(r"(?m)^\s+(?:-\w, )?--([a-z0-9][a-z0-9-]*)")


@functools.lru_cache(maxsize=None)
def known_flags(exe: str, command: str) -> FrozenSet[str]:
    """The flags ``attnopt COMMAND --help`` lists (empty when it cannot say)."""
    try:
        p = subprocess.run([exe, command, "--help"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, encoding="utf-8", errors="replace", check=False)
    except OSError:
        return frozenset()
    return frozenset(_FLAG_LINE.findall(p.stdout)) if p.returncode == 0 else frozenset()


def check_keywords(command: str, flags: Mapping[str, object], params: Iterable[str] = (),
                   reserved: Iterable[str] = ()) -> None:
    """Raise TypeError for a keyword that is no flag of ``attnopt COMMAND``,
    naming the closest flag or parameter (``params``: the function's own;
    ``reserved``: flags the function sets itself, never suggested)."""
    try:
        known = known_flags(binary_path(), command)
    except FileNotFoundError:
        return  # the run itself says the binary is missing
    if not known:
        return
    for name in flags:
        if name.replace("_", "-") in known:
            continue
        words = sorted({f.replace("-", "_") for f in known} - {"help", "quiet", *reserved} | set(params))
        close = difflib.get_close_matches(name, words, n=1)
        hint = f"; did you mean {close[0]}=?" if close else f"; it takes {', '.join(w + '=' for w in words)}"
        raise TypeError(f"attnopt.{command}() got an unexpected keyword argument {name!r}{hint}")
