"""Shared helpers for the attnopt fixture exporters.

Every family script builds small models with random (seeded) weights, then calls
``export_case`` once per fixture.  ``export_case``:

1. runs the model eagerly on seeded inputs while an ``AttnRecorder`` is active,
   which counts every attention computation *in PyTorch* (calls of
   ``F.scaled_dot_product_attention`` and of softmax over the last axis, made
   from inside the model's modules), together with the module that made it and
   the shapes it saw;
2. exports with the TorchScript exporter (``dynamo=False``) or the dynamo
   exporter (``dynamo=True``) into one self-contained ``model.onnx``; for the
   TorchScript exporter the recorder is active during the export trace too, and
   its count must equal the eager count;
3. runs the ONNX file with onnxruntime on the same inputs and records the max
   abs error against the PyTorch outputs;
4. writes ``test_data_set_0/input_i.pb`` / ``output_i.pb`` (TensorProto, ``name``
   set to the graph input/output name) and merges the manifest entry into
   ``testdata/MANIFEST.json``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import traceback
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F

import manifest
# the ONNX-only helpers, shared with the JAX / Keras / Optimum scripts
# (export_seed_sdpa_op23.py still imports strip_node_metadata from here)
from onnxfix import (ATTN_OPS, HERE, MAX_MODEL_BYTES, MODELS, TESTDATA, graph_dims, np_dtype_name, onnx_op_counts,
                     opset_of, run_ort, strip_node_metadata, write_test_data)

warnings.filterwarnings("ignore")


def seed(s: int = 0) -> None:
    torch.manual_seed(s)
    np.random.seed(s)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Attention counting in PyTorch
# --------------------------------------------------------------------------


class AttnRecorder:
    """Counts attention computations while a model runs in PyTorch.

    It wraps ``torch.softmax``, ``torch.nn.functional.softmax``,
    ``torch.Tensor.softmax`` and ``torch.nn.functional.scaled_dot_product_attention``
    and keeps a stack of the modules being executed (global forward hooks), so
    each record names the innermost module that made the call.  Nested calls
    (``F.softmax`` calls ``Tensor.softmax``) are recorded once.  A softmax is
    recorded only when it is made from inside the root model and normalises
    the last axis; ``accept`` (a predicate on the record) can drop more (e.g.
    a classifier's softmax).
    """

    def __init__(self, root: torch.nn.Module, accept=None):
        self.names = {id(m): n for n, m in root.named_modules()}
        self.accept = accept
        self.records: list[dict] = []
        self._stack: list[str] = []
        self._depth = 0
        self._saved = {}
        self._hooks = []

    # module stack -------------------------------------------------------
    def _pre(self, mod, args):
        # an nn.Softmax module is not the attention module: name its parent
        self._stack.append(None if isinstance(mod, torch.nn.Softmax) else self.names.get(id(mod)))

    def _post(self, mod, args, out):
        if self._stack:
            self._stack.pop()

    def _module(self):
        for n in reversed(self._stack):
            if n is not None:
                return n
        return None

    def _inside(self):
        return any(n is not None for n in self._stack)

    # recording ----------------------------------------------------------
    def _record(self, rec):
        rec["module"] = self._module()
        if self.accept is None or self.accept(rec):
            self.records.append(rec)

    def _wrap_softmax(self, orig, method=False):
        rec_self = self

        def wrapper(x, *args, **kwargs):
            outer = rec_self._depth == 0
            rec_self._depth += 1
            try:
                out = orig(x, *args, **kwargs)
            finally:
                rec_self._depth -= 1
            if outer and rec_self._inside():
                dim = kwargs.get("dim", args[0] if args else None)
                if dim is not None and dim in (-1, x.dim() - 1):
                    rec_self._record({"kind": "softmax", "shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", "")})
            return out

        return wrapper

    def _wrap_sdpa(self, orig):
        rec_self = self

        def wrapper(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *args, **kwargs):
            outer = rec_self._depth == 0
            rec_self._depth += 1
            try:
                out = orig(q, k, v, attn_mask, dropout_p, is_causal, *args, **kwargs)
            finally:
                rec_self._depth -= 1
            if outer and rec_self._inside():
                if is_causal:
                    mask = "causal"
                elif attn_mask is None:
                    mask = "none"
                elif attn_mask.dtype == torch.bool:
                    mask = "bool"
                else:
                    mask = "additive"
                rec_self._record(
                    {
                        "kind": "sdpa",
                        "q": list(q.shape),
                        "k": list(k.shape),
                        "v": list(v.shape),
                        "mask": mask,
                        "mask_shape": None if attn_mask is None else list(attn_mask.shape),
                        "scale": kwargs.get("scale"),
                        "dtype": str(q.dtype).replace("torch.", ""),
                    }
                )
            return out

        return wrapper

    def __enter__(self):
        self.records = []
        self._stack = []
        self._saved = {
            "torch.softmax": torch.softmax,
            "F.softmax": F.softmax,
            "Tensor.softmax": torch.Tensor.softmax,
            "F.sdpa": F.scaled_dot_product_attention,
        }
        torch.softmax = self._wrap_softmax(self._saved["torch.softmax"])
        F.softmax = self._wrap_softmax(self._saved["F.softmax"])
        torch.Tensor.softmax = self._wrap_softmax(self._saved["Tensor.softmax"])
        F.scaled_dot_product_attention = self._wrap_sdpa(self._saved["F.sdpa"])
        mm = torch.nn.modules.module
        self._hooks = [
            mm.register_module_forward_pre_hook(self._pre),
            mm.register_module_forward_hook(self._post, always_call=True),
        ]
        return self

    def __exit__(self, *exc):
        torch.softmax = self._saved["torch.softmax"]
        F.softmax = self._saved["F.softmax"]
        torch.Tensor.softmax = self._saved["Tensor.softmax"]
        F.scaled_dot_product_attention = self._saved["F.sdpa"]
        for h in self._hooks:
            h.remove()
        self._hooks = []
        return False


def default_attention_info(rec: dict, spec: dict | None = None) -> dict:
    """Turns one recorder record into a manifest ``attention`` item.

    ``spec`` supplies what the record cannot show (head dims of a softmax
    site, mask kind, grid, token order, heads folded into the batch)."""
    spec = dict(spec or {})
    if rec["kind"] == "sdpa":
        q, k, v = rec["q"], rec["k"], rec["v"]
        info = {
            "module": rec["module"],
            "heads": q[-3] if len(q) >= 3 else 1,
            "q_len": q[-2],
            "kv_len": k[-2],
            "head_dim": q[-1],
            "v_head_dim": v[-1],
            "mask": rec["mask"],
            "grid": None,
            "token_order": None,
        }
    else:
        s = rec["shape"]
        info = {
            "module": rec["module"],
            "heads": s[1] if len(s) == 4 else 1,
            "q_len": s[-2],
            "kv_len": s[-1],
            "head_dim": None,
            "v_head_dim": None,
            "mask": "none",
            "grid": None,
            "token_order": None,
        }
    info.update(spec)
    if info.get("v_head_dim") is None:
        info["v_head_dim"] = info.get("head_dim")
    return info


# --------------------------------------------------------------------------
# PyTorch outputs as numpy (the ONNX-only helpers are in onnxfix.py)
# --------------------------------------------------------------------------


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def flatten_outputs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(flatten_outputs(o))
        return res
    if isinstance(out, dict):
        res = []
        for o in out.values():
            res.extend(flatten_outputs(o))
        return res
    raise TypeError(f"unsupported output type {type(out)}")


# --------------------------------------------------------------------------
# Manifest
# --------------------------------------------------------------------------


def load_manifest() -> dict:
    return manifest.load()


def update_manifest(entries: list, failures: list, family: str) -> None:
    """Merges this family's entries (manifest.py)."""
    manifest.update(entries, failures, family, torch_version=torch.__version__)


# --------------------------------------------------------------------------
# Export one case
# --------------------------------------------------------------------------


class Family:
    """Collects the entries and failures of one family script."""

    def __init__(self, family: str):
        self.family = family
        self.entries: list = []
        self.failures: list = []
        self.only = set(a for a in sys.argv[1:] if not a.startswith("-"))
        self.expected: dict = {}

    def wanted(self, name: str) -> bool:
        return not self.only or name in self.only

    def expected_failure(self, name: str, reason: str, fn, *args, **kwargs):
        """A case that is known to fail with this toolchain: it is tried, and
        its error is recorded in the manifest's ``failures`` with ``reason``."""
        self.expected[name] = reason
        entry = self.case(name, fn, *args, **kwargs)
        if entry is not None:
            log(f"    note: {name} was expected to fail but exported; it is kept")
        return entry

    def case(self, name: str, fn, *args, **kwargs):
        """Runs ``fn`` (which calls export_case) and records failures."""
        if not self.wanted(name):
            return None
        log(f"=== {name}")
        try:
            entry = fn(name, *args, **kwargs)
            self.entries.append(entry)
            log(f"    ok: {entry['attention_count']} attention, err {entry['ort_max_abs_err']:.3g}, "
                f"{entry['size_bytes']} bytes, opset {entry['opset']}")
            return entry
        except Exception as e:  # noqa: BLE001
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:600]
            log(f"    FAILED: {msg}")
            traceback.print_exc(limit=3)
            shutil.rmtree(os.path.join(MODELS, name), ignore_errors=True)
            self.failures.append({"family": self.family, "name": name, "error": msg,
                                  "expected": name in self.expected, "why": self.expected.get(name, "")})
            return None

    def finish(self):
        update_manifest(self.entries, self.failures, self.family)
        log(f"{self.family}: {len(self.entries)} exported, {len(self.failures)} failed")
        for f in self.failures:
            log(f"  failed {f['name']} ({'expected' if f['expected'] else 'UNEXPECTED'}): {f['error']}")
        # exit status 1 when a case failed that is not a known failure
        if any(not f["expected"] for f in self.failures):
            sys.exit(1)


def export_case(
    *,
    name: str,
    model: torch.nn.Module,
    inputs: tuple,
    input_names: list,
    output_names: list,
    source: str,
    exporter: str = "torchscript",
    opset: int = 17,
    attention=None,
    accept=None,
    name_root: torch.nn.Module | None = None,
    name_prefix: str = "",
    notes: str = "",
    tol: float = 1e-4,
    reference=None,
    ref_grad: bool = False,
    expected_count: int | None = None,
    dynamic_axes: dict | None = None,
    dynamic_shapes=None,
    count_in_export: bool = True,
    onnx_differs: str = "",
    postprocess=None,
    external_data: bool = False,
) -> dict:
    """Exports ``model`` and writes its fixture directory; returns the entry.

    attention: callable(records) -> list of attention dicts, or a dict spec
      applied to every record (see default_attention_info).
    reference: optional callable(inputs) -> list of numpy outputs used instead
      of the model's own forward (fp16 models whose CPU kernels are missing).
    ref_grad: run the eager forward with autograd enabled (keeps
      nn.MultiheadAttention off its fused fast path, which the exporters do
      not take either).
    count_in_export: also count during the TorchScript export trace (False
      when the attention is in a scripted function, which the trace does not
      enter: only the eager forward counts then).
    onnx_differs: why this export is known to compute something else than
      PyTorch on these inputs (a fully masked row under a finite fill, say);
      the expected outputs are then ONNX Runtime's, the fixture being the
      exported graph, and the manifest keeps PyTorch's distance as
      ``pytorch_max_abs_err``.
    postprocess: optional callable(path) that rewrites the exported file in
      place before it is checked and run (ONNX Runtime's transformers
      optimizer, export_ortopt.py); the fixture is what it leaves.
    """
    model = model.eval()
    root = name_root if name_root is not None else model
    outdir = os.path.join(MODELS, name)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(os.path.join(outdir, "test_data_set_0"))
    path = os.path.join(outdir, "model.onnx")

    # 1. eager forward: reference outputs and attention records
    rec = AttnRecorder(root, accept)
    ctx = torch.enable_grad() if ref_grad else torch.no_grad()
    with ctx, rec:
        out = model(*inputs)
    outs = [to_numpy(o) for o in flatten_outputs(out)]
    if reference is not None:
        outs = reference(inputs)
    records = rec.records
    if name_prefix:
        for r in records:
            if r["module"] and r["module"].startswith(name_prefix):
                r["module"] = r["module"][len(name_prefix):]
    if expected_count is not None and len(records) != expected_count:
        raise RuntimeError(f"recorder counted {len(records)} attention computations, expected {expected_count}")

    # 2. export
    export_count = None
    with tempfile.TemporaryDirectory() as td:
        tmp = os.path.join(td, "model.onnx")
        if exporter == "torchscript":
            # the recorder's wrappers cannot be scripted: left out of an
            # export that scripts the attention
            rec2 = AttnRecorder(root, accept) if count_in_export else contextlib.nullcontext()
            with (torch.enable_grad() if ref_grad else torch.no_grad()), rec2:
                torch.onnx.export(
                    model,
                    inputs,
                    tmp,
                    dynamo=False,
                    opset_version=opset,
                    input_names=input_names,
                    output_names=output_names,
                    do_constant_folding=True,
                    dynamic_axes=dynamic_axes,
                )
            export_count = len(rec2.records) if count_in_export else None
            if count_in_export and export_count != len(records):
                raise RuntimeError(f"eager forward counted {len(records)} attention, export trace {export_count}")
        elif exporter == "dynamo":
            with torch.no_grad():
                prog = torch.onnx.export(
                    model,
                    inputs,
                    dynamo=True,
                    opset_version=opset,
                    input_names=input_names,
                    output_names=output_names,
                    external_data=False,
                    report=False,
                    verify=False,
                    dynamic_shapes=dynamic_shapes,
                    # legacy dynamic_axes, which torch converts to dynamic shapes
                    **({"dynamic_axes": dynamic_axes} if dynamic_axes else {}),
                )
            prog.save(tmp, external_data=False)
        else:
            raise ValueError(exporter)
        if postprocess is not None:
            postprocess(tmp)
        proto = onnx.load(tmp)
        if exporter == "dynamo":
            # the dynamo exporter stores a stack trace and FX names per node as
            # metadata_props; they can double the file size and are not needed
            strip_node_metadata(proto)
            onnx.save(proto, tmp)
        # one self-contained file, unless the case asks for its weights
        # beside it (model.onnx.data, as exporters write models over 2 GiB)
        for init in proto.graph.initializer:
            if init.data_location == onnx.TensorProto.EXTERNAL:
                raise RuntimeError("model has external data")
        onnx.checker.check_model(proto)
        if external_data:
            data_file = path + ".data"
            if os.path.exists(data_file):
                os.remove(data_file)
            onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=os.path.basename(data_file), size_threshold=1024)
        else:
            shutil.copy(tmp, path)

    size = os.path.getsize(path) + (os.path.getsize(path + ".data") if external_data else 0)
    if size >= MAX_MODEL_BYTES:
        raise RuntimeError(f"model.onnx is {size} bytes (limit {MAX_MODEL_BYTES})")

    # 3. inputs / outputs as ONNX sees them
    graph_inputs = [i.name for i in proto.graph.input]
    init_names = {i.name for i in proto.graph.initializer}
    graph_inputs = [n for n in graph_inputs if n not in init_names]
    np_inputs = [to_numpy(t) for t in inputs]
    if len(graph_inputs) != len(np_inputs):
        raise RuntimeError(f"graph has inputs {graph_inputs}, export had {len(np_inputs)} tensors")
    feeds = dict(zip(graph_inputs, np_inputs))
    out_names, ort_outs = run_ort(path, feeds)
    if len(ort_outs) != len(outs):
        raise RuntimeError(f"ORT gave {len(ort_outs)} outputs, PyTorch {len(outs)}")
    # the graph's declared output dtype wins: the expected outputs are stored in
    # it (the TorchScript SDPA decomposition of an fp16 call returns float32)
    for i, (a, b) in enumerate(zip(ort_outs, outs)):
        if a.dtype != b.dtype:
            notes += (f"{'; ' if notes else ''}output {out_names[i]}: PyTorch returns {b.dtype}, the exported graph "
                      f"declares {a.dtype}; the expected output is stored as {a.dtype}")
            outs[i] = b.astype(a.dtype)
    err = 0.0
    for a, b in zip(ort_outs, outs):
        if a.shape != b.shape:
            raise RuntimeError(f"output shape {a.shape} != {b.shape}")
        err = max(err, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0)
    pytorch_err = None
    if onnx_differs:
        pytorch_err, err = err, 0.0
        notes += f"{'; ' if notes else ''}expected outputs are ONNX Runtime's: {onnx_differs} (PyTorch max abs {pytorch_err:.3g})"
        outs = [np.asarray(a) for a in ort_outs]
    if not err < tol:
        raise RuntimeError(f"ORT max abs err {err} >= {tol}")

    # 4. test data
    write_test_data(outdir, zip(graph_inputs, np_inputs), zip(out_names, outs))

    # 5. attention items
    if callable(attention):
        items = attention(records)
    else:
        items = [default_attention_info(r, attention) for r in records]
    if len(items) != len(records):
        raise RuntimeError("attention() must give one item per record")

    dtypes = {np_dtype_name(a) for a in np_inputs if a.dtype.kind == "f"}
    entry = {
        "name": name,
        "file": os.path.relpath(path, TESTDATA),
        "source": source,
        "exporter": exporter,
        "opset": opset_of(proto),
        "torch_version": torch.__version__,
        "dtype": next(iter(dtypes)) if len(dtypes) == 1 else str(next(root.parameters()).dtype).replace("torch.", ""),
        "inputs": [{"name": n, "shape": list(a.shape), "dtype": np_dtype_name(a)} for n, a in zip(graph_inputs, np_inputs)],
        # the shapes the graph declares (a string is a symbolic dim), where some dim is not static
        "symbolic_shapes": {v.name: graph_dims(v) for v in list(proto.graph.input) + list(proto.graph.output)
                            if v.name not in init_names and any(isinstance(d, str) or d is None
                                                                 for d in graph_dims(v))} or None,
        "outputs": [{"name": n, "shape": list(a.shape), "dtype": np_dtype_name(a)} for n, a in zip(out_names, outs)],
        "attention_count": len(records),
        # where it was counted: the eager forward on the fixture inputs, and for
        # the TorchScript exporter also its export trace (the two must agree)
        "attention_counted_in": ["eager_forward", "torchscript_export_trace"]
        if exporter == "torchscript" and count_in_export else ["eager_forward"],
        "attention": items,
        # attention that a rewrite must leave alone in this export (an item
        # with "fusable": false says why); equal to attention_count elsewhere
        "fusable_count": sum(1 for it in items if it.get("fusable", True)),
        "ort_max_abs_err": err,
        **({"pytorch_max_abs_err": pytorch_err} if pytorch_err is not None else {}),
        "size_bytes": size,
        "onnx_ops": {k: v for k, v in sorted(onnx_op_counts(proto).items()) if k in ATTN_OPS},
        "notes": notes,
    }
    return entry



def rand_bool_mask(shape, p_keep=0.7, gen=None):
    """Random bool mask; every row (last axis) keeps at least one key."""
    m = torch.rand(shape, generator=gen) < p_keep
    m[..., 0] = True
    return m
