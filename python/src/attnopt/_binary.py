"""Finding the attnopt binary this package installed.

The wheel puts the Go binary in its scripts folder, so pip installs it as the
``attnopt`` command of the environment (bin/ of a venv, ~/.local/bin for
--user, DIR/bin for --target DIR) and no Python runs between the user and
it. The API runs the same file, found here.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import List

_EXE = "attnopt.exe" if sys.platform == "win32" else "attnopt"


def _candidates() -> List[Path]:
    """Places the binary can be, those that belong to this installation first."""
    pkg_parent = Path(__file__).resolve().parent.parent  # the site-packages holding attnopt/
    found: List[Path] = []
    # The install scheme whose library folder holds this package (venv,
    # system, --user, Debian's posix_local, ...): its scripts folder.
    for scheme in sysconfig.get_scheme_names():
        try:
            paths = sysconfig.get_paths(scheme)
        except (KeyError, ValueError):  # a scheme this interpreter cannot expand
            continue
        libs = {Path(paths[k]).resolve() for k in ("purelib", "platlib") if k in paths}
        if pkg_parent in libs and "scripts" in paths:
            found.append(Path(paths["scripts"]) / _EXE)
    found.append(Path(sysconfig.get_path("scripts")) / _EXE)  # this interpreter's default scheme
    found.append(pkg_parent / "bin" / _EXE)  # pip install --target DIR
    found.append(Path(sys.prefix) / "bin" / _EXE)
    return found


def binary_path() -> str:
    """Path of the attnopt binary: $ATTNOPT_BINARY when set (a development
    build), else the one this package installed, else ``attnopt`` on PATH.

    Raises FileNotFoundError when there is none.
    """
    env = os.environ.get("ATTNOPT_BINARY")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"$ATTNOPT_BINARY={env} is not an executable file")
        return env
    tried = _candidates()
    for p in tried:
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    on_path = shutil.which(_EXE)
    if on_path:
        return on_path
    raise FileNotFoundError(
        "attnopt binary not found (tried " + ", ".join(str(p) for p in tried) + " and PATH); "
        "reinstall the attnopt wheel (pip install --force-reinstall attnopt-*.whl, or pip install ./python from a checkout), or set $ATTNOPT_BINARY to an attnopt binary"
    )
