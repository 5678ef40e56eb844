"""JAX / Flax (nnx) fixtures exported with jax2onnx.

Not PyTorch, so this script does not import ``common.py`` (which imports
torch); it shares its ONNX-only helpers (onnxfix.py) and follows the same
steps as ``common.export_case``:

1. runs the JAX function on seeded inputs (``numpy.random.RandomState(0)``)
   while ``JaxAttnRecorder`` counts the attention computations *in JAX*
   (calls of ``jax.nn.dot_product_attention`` and of ``jax.nn.softmax`` over
   the last axis; nested calls count once);
2. converts it with ``jax2onnx.to_onnx`` (static shapes) into one
   self-contained ``model.onnx`` (node doc strings and metadata dropped);
3. runs the file with onnxruntime (CPU) on the same inputs and records the
   max abs error against JAX;
4. writes ``test_data_set_0/input_i.pb`` / ``output_i.pb`` (TensorProto, name =
   graph input / output name) and merges the manifest entries into
   ``testdata/MANIFEST.json`` (manifest.py, as the PyTorch families do).

Run with the virtual environment of ``requirements-jax.txt``:

    python3.11 -m venv /tmp/venv-jax
    /tmp/venv-jax/bin/pip install -r testdata/export/requirements-jax.txt
    /tmp/venv-jax/bin/python testdata/export/export_jax.py [NAME ...]
    /tmp/venv-jax/bin/python testdata/export/export_jax.py --describe [NAME ...]

Weights are seeded (``nnx.Rngs(0)``); the output is deterministic (a second
run writes identical bytes).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import traceback
from importlib import metadata

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from flax import nnx  # noqa: E402
from jax2onnx import to_onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import manifest  # noqa: E402
from onnxfix import (ATTN_OPS, MAX_MODEL_BYTES, MODELS, TESTDATA, np_dtype_name, onnx_op_counts,  # noqa: E402
                     opset_of, run_ort, write_test_data)

OPSET = 17

B, D, H = 2, 32, 4  # batch, features, heads (4 heads of 8)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def versions() -> str:
    names = ["jax", "jaxlib", "flax", "jax2onnx", "onnx", "onnxruntime", "numpy"]
    return ", ".join(f"{n} {metadata.version(n)}" for n in names)


# --------------------------------------------------------------------------
# Attention counting in JAX
# --------------------------------------------------------------------------


class JaxAttnRecorder:
    """Counts attention computations while a JAX function runs (or traces).

    Wraps ``jax.nn.dot_product_attention`` and ``jax.nn.softmax`` (Flax looks
    both up as ``jax.nn.<name>`` at call time). A softmax counts when it
    normalises the last axis; a call made inside another wrapped call (the
    xla implementation of dot_product_attention calls softmax) counts once."""

    def __init__(self):
        self.records: list[dict] = []
        self._depth = 0
        self._saved = {}

    def _wrap_dpa(self, orig):
        rec = self

        def wrapper(query, key, value, bias=None, mask=None, *args, **kwargs):
            outer = rec._depth == 0
            rec._depth += 1
            try:
                out = orig(query, key, value, bias, mask, *args, **kwargs)
            finally:
                rec._depth -= 1
            if outer:
                rec.records.append({
                    "kind": "dpa", "q": list(query.shape), "k": list(key.shape), "v": list(value.shape),
                    "mask": None if mask is None else list(mask.shape), "bias": bias is not None,
                    "is_causal": bool(kwargs.get("is_causal", False)),
                })
            return out

        return wrapper

    def _wrap_softmax(self, orig):
        rec = self

        def wrapper(x, axis=-1, *args, **kwargs):
            outer = rec._depth == 0
            rec._depth += 1
            try:
                out = orig(x, axis, *args, **kwargs)
            finally:
                rec._depth -= 1
            if outer and axis in (-1, x.ndim - 1, (-1,), (x.ndim - 1,)):
                rec.records.append({"kind": "softmax", "shape": list(x.shape)})
            return out

        return wrapper

    def __enter__(self):
        self.records = []
        self._saved = {"dpa": jax.nn.dot_product_attention, "softmax": jax.nn.softmax}
        jax.nn.dot_product_attention = self._wrap_dpa(self._saved["dpa"])
        jax.nn.softmax = self._wrap_softmax(self._saved["softmax"])
        return self

    def __exit__(self, *exc):
        jax.nn.dot_product_attention = self._saved["dpa"]
        jax.nn.softmax = self._saved["softmax"]
        return False


def attention_item(rec: dict, spec: dict) -> dict:
    """One manifest ``attention`` item from a record (q/k/v are (B, N, H, D)
    in JAX; softmax scores are (B, H, Nq, Nk))."""
    if rec["kind"] == "dpa":
        q, k, v = rec["q"], rec["k"], rec["v"]
        info = {"module": "", "heads": q[-2], "q_len": q[-3], "kv_len": k[-3], "head_dim": q[-1],
                "v_head_dim": v[-1], "mask": "causal" if rec["is_causal"] else ("bool" if rec["mask"] else "none"),
                "grid": None, "token_order": None}
    else:
        s = rec["shape"]
        info = {"module": "", "heads": s[-3], "q_len": s[-2], "kv_len": s[-1], "head_dim": None,
                "v_head_dim": None, "mask": "none", "grid": None, "token_order": None}
    info.update(spec)
    if info["v_head_dim"] is None:
        info["v_head_dim"] = info["head_dim"]
    return info


# --------------------------------------------------------------------------
# ONNX helpers
# --------------------------------------------------------------------------


def clean(model: onnx.ModelProto) -> None:
    """Drops doc strings and metadata (source locations) so the file depends
    only on the model.  More than onnxfix.strip_node_metadata (also the graph,
    tensor and model doc strings and the model's metadata_props), so it stays
    here: the jax_* fixtures were written with it."""
    def walk(g):
        g.doc_string = ""
        for n in g.node:
            n.doc_string = ""
            del n.metadata_props[:]
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
        for v in list(g.value_info) + list(g.input) + list(g.output) + list(g.initializer):
            v.doc_string = ""
            del v.metadata_props[:]

    walk(model.graph)
    model.doc_string = ""
    del model.metadata_props[:]
    for f in model.functions:
        for n in f.node:
            n.doc_string = ""
            del n.metadata_props[:]


# --------------------------------------------------------------------------
# Export one case
# --------------------------------------------------------------------------


def export_case(*, name: str, fn, inputs: list, input_names: list, output_names: list, source: str,
                attention: list, notes: str, opset: int = OPSET, tol: float = 1e-4) -> dict:
    """Converts ``fn`` (a function of arrays; the Flax modules it closes over
    become initializers) and writes its fixture; returns the manifest entry.
    ``attention``: one spec dict per expected attention record (merged into
    the item made from the record)."""
    outdir = os.path.join(MODELS, name)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(os.path.join(outdir, "test_data_set_0"))
    path = os.path.join(outdir, "model.onnx")

    # 1. JAX forward: expected outputs and attention records
    with JaxAttnRecorder() as rec:
        out = fn(*[jnp.asarray(a) for a in inputs])
    outs = [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])]
    if len(rec.records) != len(attention):
        raise RuntimeError(f"JAX counted {len(rec.records)} attention computations, expected {len(attention)}")

    # 2. convert (static shapes)
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    proto = to_onnx(fn, specs, model_name=name, opset=opset, input_names=input_names, output_names=output_names)
    for init in proto.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            raise RuntimeError("model has external data")
    clean(proto)
    onnx.checker.check_model(proto, full_check=True)
    with tempfile.TemporaryDirectory() as td:
        tmp = os.path.join(td, "model.onnx")
        onnx.save_model(proto, tmp, save_as_external_data=False)
        shutil.copy(tmp, path)
    size = os.path.getsize(path)
    if size >= MAX_MODEL_BYTES:
        raise RuntimeError(f"model.onnx is {size} bytes (limit {MAX_MODEL_BYTES})")

    # 3. ONNX Runtime on the same inputs
    init_names = {i.name for i in proto.graph.initializer}
    graph_inputs = [i.name for i in proto.graph.input if i.name not in init_names]
    if graph_inputs != list(input_names):
        raise RuntimeError(f"graph inputs {graph_inputs}, expected {input_names}")
    out_names, ort_outs = run_ort(path, dict(zip(graph_inputs, inputs)))
    if out_names != list(output_names) or len(ort_outs) != len(outs):
        raise RuntimeError(f"graph outputs {out_names}, expected {output_names}")
    err = 0.0
    for a, b in zip(ort_outs, outs):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise RuntimeError(f"ORT output {a.shape} {a.dtype} != JAX {b.shape} {b.dtype}")
        err = max(err, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    if not err <= tol:
        raise RuntimeError(f"ORT max abs err {err} > {tol}")

    # 4. test data
    write_test_data(outdir, zip(graph_inputs, inputs), zip(out_names, outs))

    items = [attention_item(r, s) for r, s in zip(rec.records, attention)]
    dtypes = {np_dtype_name(a) for a in inputs if a.dtype.kind == "f"}
    return {
        "name": name,
        "file": os.path.relpath(path, TESTDATA),
        "source": source,
        "exporter": "jax2onnx",
        "opset": opset_of(proto),
        "torch_version": None,
        "dtype": dtypes.pop() if len(dtypes) == 1 else "float32",
        "inputs": [{"name": n, "shape": list(a.shape), "dtype": np_dtype_name(a)} for n, a in zip(graph_inputs, inputs)],
        "symbolic_shapes": None,
        "outputs": [{"name": n, "shape": list(a.shape), "dtype": np_dtype_name(a)} for n, a in zip(out_names, outs)],
        "attention_count": len(items),
        "attention_counted_in": ["jax"],
        "attention": items,
        "fusable_count": len(items),
        "ort_max_abs_err": err,
        "size_bytes": size,
        "onnx_ops": {k: v for k, v in sorted(onnx_op_counts(proto).items()) if k in ATTN_OPS},
        "notes": f"{notes}; {versions()}",
    }


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def rand(rs: np.random.RandomState, *shape) -> np.ndarray:
    return rs.standard_normal(shape).astype(np.float32)


def padding(n: int) -> np.ndarray:
    """(B, n) bool, True = real token: row 0 has no padding, row 1 keeps its
    first n - 5 tokens."""
    return np.stack([np.arange(n) < L for L in (n, n - 5)])


# what jax2onnx writes for jax.nn.dot_product_attention with an explicit mask
POST_MASK = ("jax2onnx applies the mask of jax.nn.dot_product_attention after the Softmax (Softmax(QK^T*scale) * "
             "Cast(mask), ReduceSum over keys, Div where the sum > 0, 0 elsewhere), not as a fill before it")


def mha(**kw) -> nnx.MultiHeadAttention:
    return nnx.MultiHeadAttention(num_heads=H, in_features=D, decode=False, rngs=nnx.Rngs(0), **kw)


def key_padding_mask(pad):
    """nnx.make_attention_mask of every query against the real keys: (B, 1,
    N, N); padded query rows still see the real keys (float32 0/1, the
    default dtype of make_attention_mask)."""
    return nnx.make_attention_mask(jnp.ones_like(pad), pad)


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


def case_mha_self(name):
    rs = np.random.RandomState(0)
    m = mha()
    x = rand(rs, B, 16, D)
    return export_case(
        name=name, fn=lambda x: m(x), inputs=[x], input_names=["x"], output_names=["y"],
        source="flax:nnx.MultiHeadAttention",
        attention=[{"module": "attn", "head_dim": 8}],
        notes="nnx.MultiHeadAttention(4 heads, 32 features, decode=False), self-attention, no mask, 16 tokens; "
              "flax's nnx.dot_product_attention takes its jax.nn.dot_product_attention path (no dropout, no "
              "sow_weights), which jax2onnx lowers with its own plugin")


def case_mha_mask(name):
    rs = np.random.RandomState(0)
    m = mha()
    x = rand(rs, B, 16, D)
    pad = padding(16)

    def fn(x, pad):
        return m(x, mask=key_padding_mask(pad))

    return export_case(
        name=name, fn=fn, inputs=[x, pad], input_names=["x", "padding"], output_names=["y"],
        source="flax:nnx.MultiHeadAttention",
        attention=[{"module": "attn", "head_dim": 8, "mask": "bool"}],
        notes="nnx.MultiHeadAttention self-attention, 16 tokens, padding (B, N) bool input (True = real token, "
              f"rows keep their first {pad.sum(1).tolist()} keys) turned into the (B, 1, N, N) mask by "
              "nnx.make_attention_mask(ones_like(padding), padding) (float32 0/1; flax casts it to bool)" + "; " + POST_MASK)


def case_mha_causal(name):
    rs = np.random.RandomState(0)
    m = mha()
    x = rand(rs, B, 16, D)

    def fn(x):
        return m(x, mask=nnx.make_causal_mask(x[..., 0]))

    return export_case(
        name=name, fn=fn, inputs=[x], input_names=["x"], output_names=["y"],
        source="flax:nnx.MultiHeadAttention",
        attention=[{"module": "attn", "head_dim": 8, "mask": "causal"}],
        notes="nnx.MultiHeadAttention self-attention, 16 tokens, mask=nnx.make_causal_mask(x[..., 0]) "
              "((B, 1, N, N) float32 lower triangle)" + "; " + POST_MASK)


def case_mha_causal_pad(name):
    rs = np.random.RandomState(0)
    m = mha()
    x = rand(rs, B, 16, D)
    pad = padding(16)

    def fn(x, pad):
        mask = nnx.combine_masks(nnx.make_causal_mask(pad), key_padding_mask(pad))
        return m(x, mask=mask)

    return export_case(
        name=name, fn=fn, inputs=[x, pad], input_names=["x", "padding"], output_names=["y"],
        source="flax:nnx.MultiHeadAttention",
        attention=[{"module": "attn", "head_dim": 8, "mask": "causal"}],
        notes="nnx.MultiHeadAttention self-attention, 16 tokens, mask = nnx.combine_masks(nnx.make_causal_mask("
              "padding), nnx.make_attention_mask(ones_like(padding), padding)): causal and right padding "
              f"(rows keep their first {pad.sum(1).tolist()} keys; every row sees key 0)" + "; " + POST_MASK)


def case_mha_dropout_eval(name):
    rs = np.random.RandomState(0)
    m = mha(dropout_rate=0.1, deterministic=True)
    x = rand(rs, B, 16, D)
    pad = padding(16)

    def fn(x, pad):
        return m(x, mask=key_padding_mask(pad))

    return export_case(
        name=name, fn=fn, inputs=[x, pad], input_names=["x", "padding"], output_names=["y"],
        source="flax:nnx.MultiHeadAttention",
        attention=[{"module": "attn", "head_dim": 8, "mask": "bool"}],
        notes="as jax_mha_mask but nnx.MultiHeadAttention(dropout_rate=0.1, deterministic=True): a nonzero "
              "dropout rate keeps flax off the jax.nn.dot_product_attention path, so the graph is flax's own "
              "jnp code (query / sqrt(depth), einsum, where(mask, s, finfo.min), jax.nn.softmax, einsum) as "
              "jax2onnx converts it; no dropout at inference")


class DecoderLayer(nnx.Module):
    """Pre-LayerNorm decoder layer: causal self-attention, cross-attention to
    an encoder sequence, MLP (gelu), residuals."""

    def __init__(self, rngs: nnx.Rngs):
        self.ln1 = nnx.LayerNorm(D, rngs=rngs)
        self.self_attn = nnx.MultiHeadAttention(num_heads=H, in_features=D, decode=False, rngs=rngs)
        self.ln2 = nnx.LayerNorm(D, rngs=rngs)
        self.cross_attn = nnx.MultiHeadAttention(num_heads=H, in_features=D, decode=False, rngs=rngs)
        self.ln3 = nnx.LayerNorm(D, rngs=rngs)
        self.fc1 = nnx.Linear(D, 2 * D, rngs=rngs)
        self.fc2 = nnx.Linear(2 * D, D, rngs=rngs)

    def __call__(self, x, enc):
        h = self.ln1(x)
        x = x + self.self_attn(h, mask=nnx.make_causal_mask(x[..., 0]))
        h = self.ln2(x)
        x = x + self.cross_attn(h, enc, enc)
        h = self.ln3(x)
        return x + self.fc2(nnx.gelu(self.fc1(h)))


def case_decoder_layer(name):
    rs = np.random.RandomState(0)
    layer = DecoderLayer(nnx.Rngs(0))
    x = rand(rs, B, 16, D)
    enc = rand(rs, B, 24, D)
    return export_case(
        name=name, fn=lambda x, enc: layer(x, enc), inputs=[x, enc], input_names=["x", "encoder"],
        output_names=["y"], source="flax:nnx.MultiHeadAttention (decoder layer)",
        attention=[{"module": "self_attn", "head_dim": 8, "mask": "causal"},
                   {"module": "cross_attn", "head_dim": 8, "mask": "none"}],
        notes="pre-LayerNorm decoder layer (nnx.LayerNorm, nnx.MultiHeadAttention, nnx.Linear 32-64-32 with "
              "nnx.gelu): causal self-attention over 16 tokens (nnx.make_causal_mask), cross-attention of the "
              "16 queries over 24 encoder tokens (no mask), MLP, residuals" + "; " + POST_MASK)


def case_dot_product(name, causal):
    rs = np.random.RandomState(0)
    q, k, v = (rand(rs, B, 16, H, 8) for _ in range(3))

    def fn(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation="xla")

    return export_case(
        name=name, fn=fn, inputs=[q, k, v], input_names=["q", "k", "v"], output_names=["y"],
        source="jax.nn.dot_product_attention",
        attention=[{"module": ""}],
        notes=f"jax.nn.dot_product_attention(q, k, v, is_causal={causal}, implementation='xla') on (B, N, H, D) "
              "= (2, 16, 4, 8) inputs, no projections")


def case_nnx_dpa_mask(name, opset):
    rs = np.random.RandomState(0)
    q, k, v = (rand(rs, B, 16, H, 8) for _ in range(3))
    pad = padding(16)

    def fn(q, k, v, pad):
        return nnx.dot_product_attention(q, k, v, mask=key_padding_mask(pad))

    return export_case(
        name=name, fn=fn, inputs=[q, k, v, pad], input_names=["q", "k", "v", "padding"], output_names=["y"],
        source="flax:nnx.dot_product_attention", opset=opset,
        attention=[{"module": "", "mask": "bool"}],
        notes="nnx.dot_product_attention(q, k, v, mask=nnx.make_attention_mask(ones_like(padding), padding)) "
              "called directly on (B, N, H, D) = (2, 16, 4, 8) inputs: jax2onnx replaces the flax.nnx."
              "dot_product_attention attribute with its own primitive (nnx.MultiHeadAttention holds the "
              f"original function and does not reach it); rows keep their first {pad.sum(1).tolist()} keys"
              + ("; at opset 23 jax2onnx writes the ONNX Attention op" if opset >= 23 else ""))


CASES = {
    "jax_mha_self": case_mha_self,
    "jax_mha_mask": case_mha_mask,
    "jax_mha_causal": case_mha_causal,
    "jax_mha_causal_pad": case_mha_causal_pad,
    "jax_mha_dropout_eval": case_mha_dropout_eval,
    "jax_decoder_layer": case_decoder_layer,
    "jax_dot_product": lambda n: case_dot_product(n, False),
    "jax_dot_product_causal": lambda n: case_dot_product(n, True),
    "jax_nnx_dpa_mask": lambda n: case_nnx_dpa_mask(n, OPSET),
    "jax_nnx_dpa_mask_op23": lambda n: case_nnx_dpa_mask(n, 23),
}


# --------------------------------------------------------------------------
# --describe: the op chain of each attention in a fixture
# --------------------------------------------------------------------------


def describe(path: str) -> list:
    """For each Softmax: the nodes on every path from the Q·K product (the
    nearest MatMul / Einsum above it) to the value product (the nearest below
    it), then the nodes that feed that chain (one level), in graph order; each
    with its attributes and inputs (``init`` = initializer, with its value if
    it has at most 4 elements)."""
    m = onnx.load(path)
    g = m.graph
    nodes = list(g.node)  # one wrapper per node: id() is stable below
    order = {id(n): i for i, n in enumerate(nodes)}
    prod = {o: n for n in nodes for o in n.output}
    cons: dict = {}
    for n in nodes:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    products = ("MatMul", "Einsum")

    def nearest(start, step):
        seen, todo = set(), [start]
        while todo:
            n = todo.pop(0)
            for x in step(n):
                if id(x) in seen:
                    continue
                seen.add(id(x))
                if x.op_type in products:
                    return x
                todo.append(x)
        return None

    def producers(n):
        return [prod[i] for i in n.input if i in prod]

    def consumers(n):
        return [c for o in n.output for c in cons.get(o, [])]

    def closure(n, step):
        seen, todo = {id(n): n}, [n]
        while todo:
            for x in step(todo.pop()):
                if id(x) not in seen:
                    seen[id(x)] = x
                    todo.append(x)
        return seen

    def fmt(n):
        attrs = []
        for a in n.attribute:
            v = onnx.helper.get_attribute_value(a)
            attrs.append(f"{a.name}={v.decode() if isinstance(v, bytes) else v}")
        args = []
        for i in n.input:
            if i in inits:
                a = inits[i]
                args.append(f"init{list(a.shape)}" + (f"={a.ravel().tolist()}" if a.size <= 4 else f":{a.dtype}"))
            elif i in prod:
                args.append(f"{prod[i].op_type}:{i}")
            else:
                args.append(f"input:{i}")
        return f"{n.op_type}{'{' + ', '.join(attrs) + '}' if attrs else ''}({', '.join(args)})"

    lines = []
    for sm in [n for n in nodes if n.op_type in ("Softmax", "Attention")]:
        if sm.op_type == "Attention":
            core = {id(sm): sm}
        else:
            qk, pv = nearest(sm, producers), nearest(sm, consumers)
            if qk is None or pv is None:
                lines.append(f"  Softmax {sm.output[0]}: no MatMul/Einsum on both sides")
                continue
            down, up = closure(qk, consumers), closure(pv, producers)
            core = {k: v for k, v in down.items() if k in up}
        feed = {}
        for n in core.values():
            for p in producers(n):
                if id(p) not in core:
                    feed[id(p)] = p
        lines.append(f"  attention at {sm.op_type} {sm.output[0]}:")
        for n in sorted(feed.values(), key=lambda n: order[id(n)]):
            lines.append(f"    feed  {fmt(n)}")
        for n in sorted(core.values(), key=lambda n: order[id(n)]):
            lines.append(f"    chain {fmt(n)}")
    return lines


def main():
    if "--describe" in sys.argv:
        for name in [a for a in sys.argv[1:] if not a.startswith("-")] or list(CASES):
            print(name)
            print("\n".join(describe(os.path.join(MODELS, name, "model.onnx"))))
        return
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    entries, failed = [], []
    for name, fn in CASES.items():
        if only and name not in only:
            continue
        log(f"=== {name}")
        try:
            e = fn(name)
            entries.append(e)
            log(f"    ok: {e['attention_count']} attention, err {e['ort_max_abs_err']:.3g}, {e['size_bytes']} bytes, "
                f"opset {e['opset']}")
        except Exception as ex:  # noqa: BLE001
            log(f"    FAILED: {type(ex).__name__}: {ex}")
            traceback.print_exc(limit=4)
            shutil.rmtree(os.path.join(MODELS, name), ignore_errors=True)
            failed.append(name)
    manifest.update(entries, [], "jax")
    log(f"jax: {len(entries)} exported, {len(failed)} failed {failed}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
