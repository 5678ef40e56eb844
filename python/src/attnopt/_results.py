"""Typed results of the commands, built from the JSON documents the binary
prints (docs/reports.md); each keeps the whole document as ``json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

Dim = Union[int, str, None]
"""A dim: an integer, a symbolic expression ("batch") while unpinned, or
None when unknown."""

JSON = Dict[str, Any]


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Site:
    """An attention site (``inspect``): the MatMul-Softmax-MatMul chain
    ``rewrite`` would fuse, its shapes and its memory in bytes."""

    id: int
    softmax: str
    variant: str
    nodes: List[str]
    q: str
    k: str
    v: str
    output: str
    batch: Optional[int]
    heads: Optional[int]
    kv_heads: Optional[int]
    q_len: Optional[int]
    kv_len: Optional[int]
    head_dim: Optional[int]
    v_head_dim: Optional[int]
    dtype: str
    mask: str
    causal: bool
    scale: float
    score_bytes: Optional[int]
    """The naive N x N score tensor; None while a dim is symbolic."""
    fused_bytes: Optional[int]
    """What the fused op adds beyond its inputs and output, per CPU worker thread."""
    io_bytes: Optional[int]
    """Q, K, V and O, which the original and the rewrite both hold."""
    subgraph: Optional[str]
    """The If/Loop body or decoder it is in; None in the main graph."""
    lifted_from: Optional[str]
    """The exporter's fused op it was lifted from ("ai.onnx.Attention")."""

    @classmethod
    def from_json(cls, d: JSON) -> "Site":
        return cls(id=d["id"], softmax=d["softmax"], variant=d.get("variant", ""), nodes=list(d.get("nodes") or []),
                   q=d.get("q", ""), k=d.get("k", ""), v=d.get("v", ""), output=d.get("output", ""),
                   batch=_int(d.get("batch")), heads=_int(d.get("heads")), kv_heads=_int(d.get("kv_heads")),
                   q_len=_int(d.get("q_len")), kv_len=_int(d.get("kv_len")), head_dim=_int(d.get("head_dim")),
                   v_head_dim=_int(d.get("v_head_dim")), dtype=d.get("dtype", ""), mask=d.get("mask", ""),
                   causal=bool(d.get("causal")), scale=float(d.get("scale") or 0.0),
                   score_bytes=_int(d.get("score_bytes")), fused_bytes=_int(d.get("fused_bytes")),
                   io_bytes=_int(d.get("io_bytes")),
                   subgraph=d.get("subgraph") or None, lifted_from=d.get("lifted_from") or None)


@dataclass(frozen=True)
class FusedOp:
    """An attention op that is already fused (attnopt's own, ONNX Runtime's, ONNX Attention)."""

    op: str
    domain: str
    node: str

    @classmethod
    def from_json(cls, d: JSON) -> "FusedOp":
        return cls(op=d.get("op", ""), domain=d.get("domain", ""), node=d.get("node", ""))


@dataclass(frozen=True)
class InspectResult:
    """``inspect``: the sites of a model and its fused attention ops."""

    model: str
    opsets: Dict[str, int]
    sites: List[Site]
    fused: List[FusedOp]
    score_bytes: Optional[int]
    """All sites' score tensors; None while a dim is symbolic."""
    fused_bytes: Optional[int]
    """What the fused ops would add, summed; None while a dim is symbolic."""
    io_bytes: Optional[int]
    """All sites' Q, K, V and O, which both graphs hold."""
    json: JSON = field(repr=False)

    @classmethod
    def from_json(cls, d: JSON) -> "InspectResult":
        t = d.get("totals") or {}
        return cls(model=d.get("model", ""), opsets=dict(d.get("opsets") or {}),
                   sites=[Site.from_json(s) for s in d.get("sites") or []],
                   fused=[FusedOp.from_json(f) for f in d.get("fused") or []],
                   score_bytes=_int(t.get("score_bytes")), fused_bytes=_int(t.get("fused_bytes")),
                   io_bytes=_int(t.get("io_bytes")), json=d)


@dataclass(frozen=True)
class OutputMetrics:
    """One compared output: errors, cosine, where the worst one is, and the verdict."""

    output: str
    max_abs: float
    max_rel: float
    mean_abs: float
    cosine: float
    worst_index: List[int]
    nan_or_inf: int
    atol: float
    passed: bool

    @classmethod
    def from_json(cls, d: JSON) -> "OutputMetrics":
        return cls(output=d.get("output", ""), max_abs=float(d.get("max_abs") or 0), max_rel=float(d.get("max_rel") or 0),
                   mean_abs=float(d.get("mean_abs") or 0), cosine=float(d.get("cosine") or 0),
                   worst_index=list(d.get("worst_index") or []), nan_or_inf=int(d.get("nan_or_inf") or 0),
                   atol=float(d.get("atol") or 0), passed=bool(d.get("pass")))


@dataclass(frozen=True)
class Check:
    """One comparison: a site (run alone), a subgraph, or the whole model."""

    name: str
    site: Optional[int]
    passed: bool
    approximate: bool
    reduced: str
    """What was run at a reduced length and why ("" when nothing was)."""
    error: str
    outputs: List[OutputMetrics]

    @classmethod
    def from_json(cls, d: JSON) -> "Check":
        return cls(name=d.get("name", ""), site=_int(d.get("site")), passed=bool(d.get("pass")),
                   approximate=bool(d.get("approximate")), reduced=d.get("reduced") or "", error=d.get("error") or "",
                   outputs=[OutputMetrics.from_json(o) for o in d.get("outputs") or []])


@dataclass(frozen=True)
class Runtime:
    """The runtime seeded inputs ran in: "go", or "ort" with ONNX Runtime's
    version and the libraries loaded, named as reports name them: relative
    to the working directory when inside it, else by file name."""

    name: str
    version: Optional[str]
    library: Optional[str]
    custom_ops: Optional[str]
    note: Optional[str]
    """Why the default was not ONNX Runtime."""

    @classmethod
    def from_json(cls, d: Optional[JSON], name: str = "") -> "Runtime":
        d = d or {}
        return cls(name=d.get("name") or name, version=d.get("version"), library=d.get("library"),
                   custom_ops=d.get("custom_ops"), note=d.get("note"))


@dataclass(frozen=True)
class ValidateResult:
    """``validate``, or the validation of ``rewrite(validate=True)``."""

    passed: bool
    runtime: Runtime
    scope: str
    seed: int
    checks: List[Check]
    no_checks: bool
    """No rewritten site was found, so nothing was compared (exit 3)."""
    json: JSON = field(repr=False)

    @classmethod
    def from_json(cls, d: JSON, runtime: Optional[JSON] = None) -> "ValidateResult":
        prov_rt = runtime if runtime is not None else (d.get("provenance") or {}).get("runtime")
        return cls(passed=bool(d.get("pass")), runtime=Runtime.from_json(prov_rt, d.get("runtime", "")),
                   scope=d.get("scope", ""), seed=int(d.get("seed") or 0),
                   checks=[Check.from_json(c) for c in d.get("checks") or []],
                   no_checks=bool(d.get("no_checks")), json=d)


@dataclass(frozen=True)
class SiteReport:
    """A site of the original and what happened to it (``rewrite``, ``diff``)."""

    id: int
    softmax: str
    status: str
    """fused, approximated, left (the rewrite declined it: ``reason``),
    unchanged, removed, or new (a site of the second model only)."""
    op: str
    approximation: Optional[str]
    reason: str
    bytes_before: Optional[int]
    bytes_after: Optional[int]
    max_abs: Optional[float]
    """Its validation's worst error, when it was validated."""

    @classmethod
    def from_json(cls, d: JSON) -> "SiteReport":
        v = d.get("validation") or {}
        errs = [float(o.get("max_abs") or 0) for o in v.get("outputs") or []]
        return cls(id=d["id"], softmax=d.get("softmax", ""), status=d.get("status", ""), op=d.get("op", ""),
                   approximation=d.get("approximation"), reason=d.get("reason") or "",
                   bytes_before=_int(d.get("bytes_before")), bytes_after=_int(d.get("bytes_after")),
                   max_abs=max(errs) if errs else None)


@dataclass(frozen=True)
class DiffResult:
    """``diff``: what differs between two models (attnopt.report/v1)."""

    changed: bool
    sites: List[SiteReport]
    new_sites: List[SiteReport]
    bytes_before: Optional[int]
    bytes_after: Optional[int]
    nodes_removed: int
    nodes_added: int
    nodes_changed: int
    json: JSON = field(repr=False)

    @classmethod
    def from_json(cls, d: JSON) -> "DiffResult":
        t, n = d.get("totals") or {}, d.get("nodes") or {}
        return cls(changed=bool(d.get("changed")), sites=[SiteReport.from_json(s) for s in d.get("sites") or []],
                   new_sites=[SiteReport.from_json(s) for s in d.get("new_sites") or []],
                   bytes_before=_int(t.get("bytes_before")), bytes_after=_int(t.get("bytes_after")),
                   nodes_removed=len(n.get("removed") or []), nodes_added=len(n.get("added") or []),
                   nodes_changed=len(n.get("changed") or []), json=d)


@dataclass(frozen=True)
class CheckSite:
    """An unfused site against the budget (``check``)."""

    id: int
    softmax: str
    score_bytes: Optional[int]
    fused_bytes: Optional[int]
    status: str
    """ok, over (the budget), or unknown (a symbolic dim)."""

    @classmethod
    def from_json(cls, d: JSON) -> "CheckSite":
        return cls(id=d["id"], softmax=d.get("softmax", ""), score_bytes=_int(d.get("score_bytes")),
                   fused_bytes=_int(d.get("fused_bytes")), status=d.get("status", ""))


@dataclass(frozen=True)
class CheckResult:
    """``check``: every unfused site against a per-site memory budget."""

    passed: bool
    budget_bytes: int
    over: int
    unknown: int
    sites: List[CheckSite]
    fused: List[FusedOp]
    json: JSON = field(repr=False)

    @classmethod
    def from_json(cls, d: JSON) -> "CheckResult":
        return cls(passed=bool(d.get("pass")), budget_bytes=int(d.get("budget_bytes") or 0), over=int(d.get("over") or 0),
                   unknown=int(d.get("unknown") or 0), sites=[CheckSite.from_json(s) for s in d.get("sites") or []],
                   fused=[FusedOp.from_json(f) for f in d.get("fused") or []], json=d)


class RewriteResult:
    """What ``rewrite`` did: the output file, each site's fate, the
    validation when one ran, and the rewritten model (``model``)."""

    def __init__(self, output: Optional[str], report: JSON, stdout: str, model: Any = None) -> None:
        self.output = output
        """Path of the rewritten model; None when a ModelProto was rewritten
        without ``dst`` (the model is then only ``model``)."""
        self.report = report
        """The rewrite report (attnopt.report/v1, docs/reports.md)."""
        self.json = report
        self.stdout = stdout
        """The command's text output (one line per site, then the summary)."""
        self.sites = [SiteReport.from_json(s) for s in report.get("sites") or []]
        t = report.get("totals") or {}
        self.fused: int = int(t.get("fused") or 0)
        rw = report.get("rewrite") or {}
        self.target: str = rw.get("target", "")
        self.op: str = rw.get("op", "")
        self.runs_with: str = report.get("runs_with") or ""
        """What runs the output: the custom-op library it needs, or stock ONNX Runtime."""
        v = report.get("validation")
        self.validation: Optional[ValidateResult] = (
            ValidateResult.from_json(v, (report.get("provenance") or {}).get("runtime")) if v else None)
        self._model = model

    @property
    def model(self) -> Any:
        """The rewritten model as an ``onnx.ModelProto`` (loaded on first use;
        needs the onnx package)."""
        if self._model is None:
            try:
                import onnx
            except ImportError as e:
                raise ImportError("RewriteResult.model needs onnx: pip install onnx (the file is at "
                                  f"{self.output})") from e
            self._model = onnx.load(self.output)
        return self._model

    def __repr__(self) -> str:
        return f"RewriteResult(output={self.output!r}, fused={self.fused}/{len(self.sites)}, target={self.target!r})"
