"""The five commands: inspect, rewrite, validate, diff and check, on paths
or onnx.ModelProto, returning typed results (each runs the attnopt binary,
with ``--`` before the positional paths, so a path that starts with ``-``
is never read as a flag)."""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence, Union

from ._cli import AttnoptError, Model, Names, PathLike, is_model_proto, model_paths, parse_json, run, scratch_dir
from ._flags import FlagValue, to_args
from ._keywords import check_keywords
from ._results import CheckResult, DiffResult, InspectResult, RewriteResult, ValidateResult


def _reject(flags: Dict[str, FlagValue], reserved: List[str], fn: str, params: Sequence[str] = ()) -> None:
    """TypeError for a flag the function sets itself, or one the command
    does not have (with the close match among its flags and ``params``)."""
    for name in reserved:
        if name in flags:
            raise TypeError(f"attnopt.{fn}() sets --{name.replace('_', '-')} itself; do not pass {name}=")
    check_keywords(fn, flags, params, reserved)


def _json_command(args: List[str], paths: List[str], names: Names):
    """Run ``attnopt ARGS -- PATHS`` (ARGS ask for JSON) and return the
    process and its document, the temporary paths replaced by their
    names; AttnoptError when it printed none."""
    p = names.process(run([*args, "--", *paths]))
    doc = parse_json(p)
    if doc is None:
        raise AttnoptError(p.args, p.returncode or 2, p.stdout, p.stderr or "attnopt: printed no result")
    return p, doc


def inspect(model: Model, **flags: FlagValue) -> InspectResult:
    """List the attention sites of ``model`` (a path or an onnx.ModelProto)
    with their shapes and memory: ``attnopt inspect MODEL --json``.

    Flags as keywords (``attnopt inspect --help``): ``explain=True``,
    ``shape={"x": (1, 3, 224, 224)}``, ``dim={"batch": 1}``.
    Raises AttnoptError with the CLI's message and exit code on failure.
    """
    _reject(flags, ["json", "format"], "inspect")
    with model_paths(model) as (paths, names):
        p, doc = _json_command(["inspect", "--json", *to_args(flags)], paths, names)
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, p.stdout, p.stderr)
    return InspectResult.from_json(doc)


def default_output(src: str) -> str:
    """MODEL.attnopt.onnx beside MODEL, as the CLI names it (cmd/attnopt/rewrite.go)."""
    base = os.path.basename(src)
    dot = base.rfind(".")
    return (src[: len(src) - (len(base) - dot)] if dot >= 0 else src) + ".attnopt.onnx"


def rewrite(src: Model, dst: Optional[PathLike] = None, target: str = "attnopt", **flags: FlagValue) -> RewriteResult:
    """Fuse the attention sites of ``src`` (a path or an onnx.ModelProto)
    and write the result to ``dst`` (default: SRC.attnopt.onnx beside a
    path, never ``src`` itself; for a ModelProto without ``dst``, a
    temporary file whose model is returned as ``result.model``).

    ``target``: ``"attnopt"`` (attnopt.FlashAttention; run it with
    :func:`register`), ``"ort"`` (com.microsoft.MultiHeadAttention, stock
    ONNX Runtime), ``"gqa"`` or ``"onnx"`` (the standard Attention, opset
    >= 23 models). Other flags as keywords (``attnopt rewrite --help``):
    ``validate=True``, ``memory_budget="16GiB"``, ``allow_approx=True``,
    ``window=(8, 8)``, ``pool="kv"``, ``stride=2``, ``max_error=0.01``,
    ``shape={...}``, ``dim={...}``, ``report="report.html"``,
    ``runtime="go"``. Validation runs, by default, in this Python's
    onnxruntime with the wheel's custom-op library when both are there.

    Returns a :class:`RewriteResult` (output path, per-site results, the
    validation, ``model``). Raises AttnoptError with the CLI's message and
    exit code on failure (exit 1 when ``validate=True`` finds a site out of
    tolerance; ``error.result`` is the RewriteResult then).
    """
    _reject(flags, ["output", "o", "json"], "rewrite", ["dst", "target"])
    proto = is_model_proto(src)
    with model_paths(src) as (paths, names), scratch_dir() as tmp:
        if dst is not None:
            out = os.fspath(dst)
        elif proto:
            out = os.path.join(tmp, "model.attnopt.onnx")
            names.add(out, "<in-memory rewritten model (result.model)>")
        else:
            out = default_output(paths[0])
        # The JSON report goes to a temporary file read here (stdout keeps
        # the text lines); report= is a second --report, the user's own.
        report_path = os.path.join(tmp, "report.json")
        names.add(report_path, "<result.report>")
        args = ["rewrite", "-o", out, "--target", target, "--report", report_path, *to_args(flags)]
        raw = run([*args, "--", *paths])
        report = None
        if raw.returncode in (0, 1) and os.path.isfile(report_path):
            try:
                with open(report_path, encoding="utf-8") as f:
                    report = json.loads(names.text(f.read()))
            except ValueError as e:
                raise AttnoptError(names.process(raw).args, 2, names.text(raw.stdout),
                                   f"attnopt: the rewrite report is not JSON ({e})") from e
        # The CLI names the temporary report; the caller never sees that file.
        stdout = "".join(l for l in raw.stdout.splitlines(keepends=True) if l != f"report (json): {report_path}\n")
        p = names.process(raw)
        stdout = names.text(stdout)
        model = None
        if proto and dst is None and report is not None and os.path.isfile(out):
            import onnx  # the caller passed a ModelProto: onnx is there

            model = onnx.load(out)
        if p.returncode == 0 and (report is None or not os.path.isfile(out)):
            raise AttnoptError(p.args, 2, stdout, p.stderr or f"attnopt: rewrite exited 0 but wrote no {names.text(out)}")
        result = RewriteResult(output=None if (proto and dst is None) else out, report=report or {}, stdout=stdout,
                               model=model)
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, stdout, p.stderr, result if report is not None else None)
    return result


def validate(original: Model, rewritten: Model, runtime: Optional[str] = None, scope: str = "sites", seed: int = 1,
             **flags: FlagValue) -> ValidateResult:
    """Compare ``rewritten`` with ``original`` (paths or onnx.ModelProto)
    on seeded random inputs: ``attnopt validate ORIGINAL REWRITTEN --json``.

    ``runtime``: None or ``"auto"`` (ONNX Runtime, this Python's
    onnxruntime with the wheel's custom-op library, when installed; else
    the pure-Go runtime), ``"ort"`` or ``"go"``. ``scope``: ``"sites"``
    (each rewritten site alone) or ``"model"`` (both models end to end).
    Other flags as keywords: ``atol=``, ``rtol=``, ``dim={...}``,
    ``shape={...}``, ``ort_lib=``, ``custom_ops=``.

    Returns a :class:`ValidateResult`. Raises AttnoptError on failure:
    exit 1 when an output is out of tolerance (``error.result`` holds the
    ValidateResult), 2 for bad input, 3 when no rewritten site was found or
    an op could not run, 4 when an approximate site has no bound
    (``max_error=`` gives one; a bound the rewrite recorded in the file is
    shown, never used; docs/validate.md).
    """
    _reject(flags, ["json", "format"], "validate", ["original", "rewritten"])
    if runtime is not None:
        flags["runtime"] = runtime
    with model_paths(original, rewritten) as (paths, names):
        p, doc = _json_command(["validate", "--json", "--scope", scope, "--seed", str(seed), *to_args(flags)], paths,
                               names)
    result = ValidateResult.from_json(doc)
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, p.stdout, p.stderr, result)
    return result


def diff(a: Model, b: Model, **flags: FlagValue) -> DiffResult:
    """Compare two models (paths or onnx.ModelProto): signatures, op
    counts, nodes, initializers, opsets and each attention site with its
    memory before and after: ``attnopt diff A B --json``. Flags:
    ``dim={...}``, ``shape={...}``. Raises AttnoptError on failure.
    """
    _reject(flags, ["json", "format", "output", "o"], "diff")
    with model_paths(a, b) as (paths, names):
        p, doc = _json_command(["diff", "--json", *to_args(flags)], paths, names)
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, p.stdout, p.stderr)
    return DiffResult.from_json(doc)


def check(model: Model, memory_budget: Union[str, int], strict: bool = False, **flags: FlagValue) -> CheckResult:
    """Check every unfused attention site of ``model`` (a path or an
    onnx.ModelProto) against a per-site budget for its score tensor
    (``"16GiB"``, ``"512MiB"`` or a byte count): ``attnopt check MODEL
    --memory-budget SIZE --json``. ``strict=True`` also fails on sites of
    unknown size. Flags: ``dim={...}``, ``shape={...}``.

    Returns a :class:`CheckResult`. Raises AttnoptError on failure: exit 1
    when a site is over the budget (``error.result`` holds the
    CheckResult), 2 for bad input.
    """
    _reject(flags, ["json", "format"], "check", ["memory_budget", "strict"])
    with model_paths(model) as (paths, names):
        p, doc = _json_command(["check", "--json", "--memory-budget", str(memory_budget),
                                *to_args({"strict": strict, **flags})], paths, names)
    result = CheckResult.from_json(doc)
    if p.returncode != 0:
        raise AttnoptError(p.args, p.returncode, p.stdout, p.stderr, result)
    return result

