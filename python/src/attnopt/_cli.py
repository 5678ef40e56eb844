"""inspect and rewrite, through the attnopt binary."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

from ._binary import binary_path
from ._flags import FlagValue, to_args
from ._library import get_library_path, onnxruntime_library_path

PathLike = Union[str, "os.PathLike[str]"]


class AttnoptError(RuntimeError):
    """The attnopt binary exited non-zero.

    ``returncode`` is its exit code (1: validation failed or a site is over
    budget; 2: bad usage or bad input, see README.md), ``message`` what it
    printed on stderr (one line naming the file at fault), ``stdout`` what it
    printed before failing, ``command`` the argument list it ran with, and
    ``report`` the parsed JSON report when ``rewrite`` wrote one before the
    failure (a failed ``validate=True``), else None.
    """

    def __init__(self, command: List[str], returncode: int, stdout: str, stderr: str,
                 report: Optional[Dict[str, Any]] = None) -> None:
        self.command = command
        self.returncode = returncode
        self.stdout = stdout
        self.message = stderr.strip() or f"attnopt exited with code {returncode}"
        self.report = report
        super().__init__(f"{self.message} (exit {returncode})")


@dataclass(frozen=True)
class RewriteResult:
    """What ``rewrite`` did."""

    output: str
    """Path of the rewritten model."""
    report: Optional[Dict[str, Any]]
    """The rewrite report (``{"schema": "attnopt.report/v1", ...}``, docs/reports.md):
    per-site status, memory before and after, validation when it ran. None when
    ``report=`` named a non-JSON file."""
    stdout: str
    """The command's text output (one line per site, then the summary)."""


def _run(args: List[str]) -> subprocess.CompletedProcess[str]:
    cmd = [binary_path(), *args]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          encoding="utf-8", errors="replace", check=False)


def _reject(flags: Dict[str, FlagValue], reserved: List[str], fn: str) -> None:
    for name in reserved:
        if name in flags:
            raise TypeError(f"attnopt.{fn}() sets --{name} itself; do not pass {name}=")


def inspect(path: PathLike, **flags: FlagValue) -> Dict[str, Any]:
    """List the attention sites of the ONNX model at ``path``: runs
    ``attnopt inspect PATH --json`` with ``flags`` and returns the parsed JSON,
    ``{"model", "opsets", "sites": [...], "fused": [...], "totals"}``
    (README.md, "Commands").

    Flags as keywords (see ``attnopt inspect --help``): ``explain=True``,
    ``shape={"x": (1, 3, 224, 224)}``, ``dim={"batch": 1}``.
    Raises AttnoptError with the CLI's message and exit code on failure.
    """
    _reject(flags, ["json"], "inspect")
    args = ["inspect", os.fspath(path), "--json", *to_args(flags)]
    p = _run(args)
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, p.stdout, p.stderr)
    sites: Dict[str, Any] = json.loads(p.stdout)
    return sites


def default_output(src: str) -> str:
    """MODEL.attnopt.onnx beside MODEL, as the CLI names it (cmd/attnopt/rewrite.go)."""
    base = os.path.basename(src)
    dot = base.rfind(".")
    return (src[: len(src) - (len(base) - dot)] if dot >= 0 else src) + ".attnopt.onnx"


def rewrite(src: PathLike, dst: Optional[PathLike] = None, target: str = "attnopt",
            **flags: FlagValue) -> RewriteResult:
    """Fuse the attention sites of the model at ``src`` and write the result
    to ``dst`` (default: SRC.attnopt.onnx beside it; never ``src`` itself).

    ``target``: ``"attnopt"`` (attnopt.FlashAttention; run it with
    :func:`register`), ``"ort"`` (com.microsoft.MultiHeadAttention, stock ONNX
    Runtime) or ``"onnx"`` (the standard Attention, opset >= 23 models).
    Other flags as keywords (see ``attnopt rewrite --help``):
    ``validate=True``, ``memory_budget="16GiB"``, ``allow_approx=True``,
    ``window=(8, 8)``, ``pool="kv"``, ``stride=2``, ``max_error=0.01``,
    ``shape={...}``, ``dim={...}``, ``report="report.html"``.
    ``validate=True, runtime="ort"`` validates in ONNX Runtime: by default the
    onnxruntime package this Python has, with this package's custom-op
    library (``ort_lib=`` and ``custom_ops=`` override them).

    Returns a :class:`RewriteResult` with the output path and the parsed
    JSON report. Raises AttnoptError with the CLI's message and exit code on
    failure (exit 1 when ``validate=True`` finds a site out of tolerance).
    """
    _reject(flags, ["output", "o"], "rewrite")
    if flags.get("runtime") == "ort":
        # Validate in this Python's onnxruntime with the wheel's custom ops.
        flags.setdefault("custom_ops", get_library_path())
        if not flags.get("ort_lib"):
            flags["ort_lib"] = onnxruntime_library_path()
    src_s = os.fspath(src)
    out = os.fspath(dst) if dst is not None else default_output(src_s)
    user_report = flags.get("report")
    with tempfile.TemporaryDirectory(prefix="attnopt-") as tmp:
        # Without report=, the report goes to a temporary JSON file read here.
        report_path = os.fspath(user_report) if user_report else os.path.join(tmp, "report.json")  # type: ignore[arg-type]
        rest = {k: v for k, v in flags.items() if k != "report"}
        p = _run(["rewrite", src_s, "-o", out, "--target", target, "--report", report_path, *to_args(rest)])
        report = None
        # Exit 0 or 1 (validation failed) means this run wrote the report.
        if p.returncode in (0, 1) and report_path.endswith(".json") and os.path.isfile(report_path):
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
    stdout = p.stdout
    if not user_report:  # the CLI names the temporary report; the caller never sees that file
        stdout = "".join(l for l in stdout.splitlines(keepends=True) if not l.startswith("report (json): "))
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, stdout, p.stderr, report)
    return RewriteResult(output=out, report=report, stdout=stdout)
