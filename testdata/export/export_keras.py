"""Keras (TensorFlow backend) attention fixtures, converted with tf2onnx.

Not PyTorch: this script runs in its own virtual environment (see
requirements-keras.txt and README.md) and does not import common.py, which
imports torch; it shares its ONNX-only helpers (onnxfix.py) and mirrors
common.export_case for Keras models:

1. builds each model with seeded random weights (keras.utils.set_random_seed);
2. runs it in Keras (eager, training=False) on seeded inputs while the calls
   of ``MultiHeadAttention._compute_attention`` are recorded: each call is one
   attention computation, named by the layer;
3. converts it with ``tf2onnx.convert.from_keras`` (opset 17) into one
   self-contained ``model.onnx``, whose nodes and tensors are then put in a
   canonical order and renamed (``canonicalize``: tf2onnx's names and node
   order vary from run to run), so the file is byte-identical from run to
   run;
4. runs the ONNX file with onnxruntime on the same inputs and records the max
   abs error against Keras;
5. writes ``test_data_set_0/input_i.pb`` / ``output_i.pb`` (TensorProto, ``name``
   set to the graph input/output name) and merges the manifest entries into
   ``testdata/MANIFEST.json`` (manifest.py, as the PyTorch families do).

Usage:
  python export_keras.py [NAME ...]        export (default: every case)
  python export_keras.py --describe [NAME ...]
                                           print the op chains around each
                                           Softmax of the exported fixtures
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import manifest  # noqa: E402
from onnxfix import (ATTN_OPS, MAX_MODEL_BYTES, MODELS, TESTDATA, np_dtype_name, onnx_op_counts,  # noqa: E402
                     opset_of, run_ort, write_test_data)

OPSET = 17
TOL = 1e-4

B, D, HEADS, HEAD_DIM = 2, 32, 4, 8


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# tf2onnx output made deterministic
# --------------------------------------------------------------------------


def canonicalize(model: onnx.ModelProto) -> None:
    """Makes tf2onnx's output the same from run to run.

    tf2onnx gives its nodes and constants counter names (``Unsqueeze__88``,
    ``const_fold_opt__12``) and names the constants of its Einsum
    decomposition after Python object ids; its optimizers visit nodes in an
    order that varies between runs, and when they merge equal constants or
    nodes one of the names survives.  The graph is the same from run to run
    up to those names, so the nodes are put in a canonical topological order
    (by depth, then a hash of their op, attributes and inputs) and every node,
    intermediate tensor and initializer is renamed in that order: node
    ``<OpType>_<k>``, its outputs ``<OpType>_<k>:<j>``, initializers
    ``const_<k>`` (by first use).  Graph inputs and outputs keep their names.
    """
    import hashlib

    g = model.graph
    if any(a.HasField("g") or len(a.graphs) for n in g.node for a in n.attribute):
        raise RuntimeError("subgraphs are not handled")
    inits = {t.name: t for t in g.initializer}
    producer = {o: (i, j) for i, n in enumerate(g.node) for j, o in enumerate(n.output)}
    tensor_sig: dict = {}
    for i in g.input:
        tensor_sig[i.name] = "in:" + i.name
    for name, t in inits.items():
        c = onnx.TensorProto()
        c.CopyFrom(t)
        c.name = ""
        tensor_sig[name] = "init:" + hashlib.sha256(c.SerializeToString()).hexdigest()
    tensor_sig[""] = "none"

    def attr_repr(a):
        c = onnx.AttributeProto()
        c.CopyFrom(a)
        if c.HasField("t"):
            c.t.name = ""
        return c.SerializeToString()

    depth: dict = {}
    node_sig: dict = {}

    def visit(i):
        if i in node_sig:
            return
        n = g.node[i]
        d = 0
        for x in n.input:
            if x in producer:
                visit(producer[x][0])
                d = max(d, depth[producer[x][0]] + 1)
        h = hashlib.sha256()
        h.update(f"{n.domain}:{n.op_type}".encode())
        for a in sorted(n.attribute, key=lambda a: a.name):
            h.update(attr_repr(a))
        for x in n.input:
            h.update(tensor_sig[x].encode() + b"|")
        node_sig[i] = h.hexdigest()
        depth[i] = d
        for j, o in enumerate(n.output):
            tensor_sig[o] = f"{node_sig[i]}:{j}"

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(g.node) + 100))
    for i in range(len(g.node)):
        visit(i)
    order = sorted(range(len(g.node)), key=lambda i: (depth[i], node_sig[i]))
    keep = {i.name for i in g.input} | {o.name for o in g.output}
    rename: dict = {}
    nodes = [g.node[i] for i in order]
    for k, n in enumerate(nodes):
        n.name = f"{n.op_type}_{k}"
        for j, o in enumerate(n.output):
            if o and o not in keep:
                rename[o] = f"{n.op_type}_{k}:{j}"
    used = []
    for n in nodes:
        for x in n.input:
            if x in inits and x not in rename:
                rename[x] = f"const_{len(used)}"
                used.append(inits[x])
    unused = sorted((t for t in g.initializer if t.name not in rename), key=lambda t: t.name)
    for n in nodes:
        n.input[:] = [rename.get(x, x) for x in n.input]
        n.output[:] = [rename.get(x, x) for x in n.output]
    for t in used:
        t.name = rename[t.name]
    new_nodes = [onnx.NodeProto() for _ in nodes]
    for a, b in zip(new_nodes, nodes):
        a.CopyFrom(b)
    del g.node[:]
    g.node.extend(new_nodes)
    new_inits = [onnx.TensorProto() for _ in used + unused]
    for a, b in zip(new_inits, used + unused):
        a.CopyFrom(b)
    del g.initializer[:]
    g.initializer.extend(new_inits)
    vis = []
    for v in g.value_info:
        if v.name in rename:
            c = onnx.ValueInfoProto()
            c.CopyFrom(v)
            c.name = rename[v.name]
            vis.append(c)
    vis.sort(key=lambda v: v.name)
    del g.value_info[:]
    g.value_info.extend(vis)


# --------------------------------------------------------------------------
# attention counting in Keras
# --------------------------------------------------------------------------


class MHARecorder:
    """Records each call of ``MultiHeadAttention._compute_attention`` (one
    attention computation) with the layer name, the projected Q/K/V shapes
    (B, T, N, H) and the mask it was given, while a model runs in Keras."""

    def __init__(self):
        self.records: list = []

    def __enter__(self):
        import keras

        cls = keras.layers.MultiHeadAttention
        self._cls, self._orig = cls, cls.__dict__["_compute_attention"]
        rec, orig = self.records, self._orig

        def wrapper(layer, query, key, value, attention_mask=None, *args, **kwargs):
            causal = bool(kwargs.get("use_causal_mask", False))
            rec.append({
                "module": layer.name,
                "q": list(query.shape), "k": list(key.shape), "v": list(value.shape),
                "mask": "causal" if causal and attention_mask is None else ("none" if attention_mask is None else "bool"),
                "mask_shape": None if attention_mask is None else list(attention_mask.shape),
            })
            return orig(layer, query, key, value, attention_mask, *args, **kwargs)

        # the same function object on the class: MultiHeadAttention.call's
        # "is _compute_attention overridden" test still sees the original
        cls._compute_attention = wrapper
        return self

    def __exit__(self, *exc):
        self._cls._compute_attention = self._orig
        return False


def attention_item(rec: dict, mask: str | None = None) -> dict:
    q, k, v = rec["q"], rec["k"], rec["v"]  # (B, T, N, H)
    return {
        "module": rec["module"],
        "heads": q[2],
        "q_len": q[1],
        "kv_len": k[1],
        "head_dim": q[3],
        "v_head_dim": v[3],
        "mask": mask or rec["mask"],
        "grid": None,
        "token_order": None,
    }


# --------------------------------------------------------------------------
# export one case
# --------------------------------------------------------------------------


def versions() -> dict:
    import keras
    import onnxruntime
    import tensorflow as tf
    import tf2onnx

    return {"tensorflow": tf.__version__, "keras": keras.__version__, "tf2onnx": tf2onnx.__version__,
            "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__}


def export_case(*, name: str, build, inputs: dict, source: str, notes: str, mask: str | None = None,
                expected_count: int) -> dict:
    """build(): a keras.Model whose inputs are named as the keys of ``inputs``
    (in order).  Returns the manifest entry."""
    import keras
    import tensorflow as tf
    import tf2onnx

    # fresh Keras / tf2onnx name counters, so that a case's names do not
    # depend on which cases ran before it in this process
    keras.backend.clear_session()
    tf2onnx.utils.INTERNAL_NAME = 1
    keras.utils.set_random_seed(0)
    model = build()
    names = list(inputs)
    arrays = [inputs[n] for n in names]
    if [t.name for t in model.inputs] != names:
        raise RuntimeError(f"model inputs {[t.name for t in model.inputs]} != {names}")

    outdir = os.path.join(MODELS, name)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(os.path.join(outdir, "test_data_set_0"))
    path = os.path.join(outdir, "model.onnx")

    # 1. Keras forward: reference outputs and attention records
    with MHARecorder() as rec:
        out = model([tf.constant(a) for a in arrays], training=False)
    outs = [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]
    records = rec.records
    if len(records) != expected_count:
        raise RuntimeError(f"recorded {len(records)} attention computations, expected {expected_count}")

    # 2. convert
    spec = tuple(tf.TensorSpec(a.shape, tf.as_dtype(a.dtype), name=n) for n, a in zip(names, arrays))
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=OPSET)
    canonicalize(proto)
    for init in proto.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            raise RuntimeError("model has external data")
    onnx.checker.check_model(proto, full_check=True)
    with tempfile.TemporaryDirectory() as td:
        tmp = os.path.join(td, "model.onnx")
        onnx.save(proto, tmp)
        shutil.copy(tmp, path)
    size = os.path.getsize(path)
    if size >= MAX_MODEL_BYTES:
        raise RuntimeError(f"model.onnx is {size} bytes (limit {MAX_MODEL_BYTES})")
    softmaxes = onnx_op_counts(proto).get("Softmax", 0)
    if softmaxes != len(records):
        raise RuntimeError(f"{softmaxes} Softmax nodes in the ONNX graph, {len(records)} attention in Keras")

    # 3. ONNX Runtime on the same inputs
    init_names = {i.name for i in proto.graph.initializer}
    graph_inputs = [i.name for i in proto.graph.input if i.name not in init_names]
    if graph_inputs != names:
        raise RuntimeError(f"graph inputs {graph_inputs} != {names}")
    out_names, ort_outs = run_ort(path, dict(zip(names, arrays)))
    if len(ort_outs) != len(outs):
        raise RuntimeError(f"ORT gave {len(ort_outs)} outputs, Keras {len(outs)}")
    err = 0.0
    for a, b in zip(ort_outs, outs):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise RuntimeError(f"output {a.shape} {a.dtype} != Keras {b.shape} {b.dtype}")
        err = max(err, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    if not err <= TOL:
        raise RuntimeError(f"ORT max abs err {err} > {TOL}")

    # 4. test data
    write_test_data(outdir, zip(names, arrays), zip(out_names, outs))

    v = versions()
    items = [attention_item(r, mask) for r in records]
    dtypes = {np_dtype_name(a) for a in arrays if a.dtype.kind == "f"}
    return {
        "name": name,
        "file": os.path.relpath(path, TESTDATA),
        "source": source,
        "exporter": "tf2onnx",
        "opset": opset_of(proto),
        "torch_version": None,
        "dtype": next(iter(dtypes)),
        "inputs": [{"name": n, "shape": list(a.shape), "dtype": np_dtype_name(a)} for n, a in zip(names, arrays)],
        "symbolic_shapes": None,
        "outputs": [{"name": n, "shape": list(a.shape), "dtype": np_dtype_name(a)} for n, a in zip(out_names, outs)],
        "attention_count": len(records),
        "attention_counted_in": ["keras"],
        "attention": items,
        "fusable_count": len(items),
        "ort_max_abs_err": err,
        "size_bytes": size,
        "onnx_ops": {k: c for k, c in sorted(onnx_op_counts(proto).items()) if k in ATTN_OPS},
        "notes": (f"{notes}; tf2onnx.convert.from_keras, opset {OPSET}; TensorFlow {v['tensorflow']} (CPU), "
                  f"Keras {v['keras']}, tf2onnx {v['tf2onnx']}, onnx {v['onnx']}, "
                  f"expected outputs from Keras (eager, training=False)"),
    }


# --------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def randn(g, *shape) -> np.ndarray:
    return g.standard_normal(shape).astype(np.float32)


def bool_mask(g, shape, p_keep=0.7) -> np.ndarray:
    """Random bool mask (True = attend); every row keeps its first key."""
    m = g.random(shape) < p_keep
    m[..., 0] = True
    return m


def mha(name: str):
    import keras

    # random biases: zero biases would leave no bias Add to see
    return keras.layers.MultiHeadAttention(
        num_heads=HEADS, key_dim=HEAD_DIM, name=name,
        bias_initializer=keras.initializers.RandomNormal(stddev=0.1))


def build_self(n: int, *, masked=False, causal=False):
    def build():
        import keras

        x = keras.Input((n, D), batch_size=B, name="x")
        ins = [x]
        kw = {}
        if masked:
            m = keras.Input((n, n), batch_size=B, name="attention_mask", dtype="bool")
            ins.append(m)
            kw["attention_mask"] = m
        if causal:
            kw["use_causal_mask"] = True
        y = mha("mha")(x, x, **kw)
        return keras.Model(ins, y, name="model")

    return build


def build_cross(nq: int, nk: int):
    def build():
        import keras

        q = keras.Input((nq, D), batch_size=B, name="query")
        c = keras.Input((nk, D), batch_size=B, name="context")
        y = mha("mha")(q, c)  # key defaults to value
        return keras.Model([q, c], y, name="model")

    return build


def build_encoder(n: int, blocks: int = 2, mlp: int = 64):
    def build():
        import keras
        from keras import layers, ops

        rand = keras.initializers.RandomNormal(stddev=0.1)
        x = keras.Input((n, D), batch_size=B, name="x")
        pad = keras.Input((n,), batch_size=B, name="padding_mask", dtype="bool")
        # (B, 1, N): every query row sees the unpadded keys
        am = ops.expand_dims(pad, 1)
        h = x
        for i in range(blocks):
            a = layers.LayerNormalization(epsilon=1e-6, beta_initializer=rand, name=f"block{i}_ln1")(h)
            a = mha(f"block{i}_mha")(a, a, attention_mask=am)
            h = layers.Add(name=f"block{i}_add1")([h, a])
            f = layers.LayerNormalization(epsilon=1e-6, beta_initializer=rand, name=f"block{i}_ln2")(h)
            f = layers.Dense(mlp, bias_initializer=rand, name=f"block{i}_fc1")(f)
            # tanh GELU: TensorFlow 2.21 writes the exact GELU with Erfc, which
            # tf2onnx 1.17 does not convert
            f = ops.gelu(f, approximate=True)
            f = layers.Dense(D, bias_initializer=rand, name=f"block{i}_fc2")(f)
            h = layers.Add(name=f"block{i}_add2")([h, f])
        h = layers.LayerNormalization(epsilon=1e-6, name="final_ln")(h)
        return keras.Model([x, pad], h, name="model")

    return build


SIZES = f"{HEADS} heads of {HEAD_DIM}, model dim {D}, batch {B}"


def cases():
    g = rng(0)
    n = 16
    yield dict(name="keras_mha_self", build=build_self(n), inputs={"x": randn(g, B, n, D)},
               source="keras:layers.MultiHeadAttention", expected_count=1,
               notes=f"one keras.layers.MultiHeadAttention, self-attention mha(x, x), no mask; {SIZES}, seq {n}; "
                     f"biases random (stddev 0.1)")
    g = rng(1)
    yield dict(name="keras_mha_mask", build=build_self(n, masked=True),
               inputs={"x": randn(g, B, n, D), "attention_mask": bool_mask(g, (B, n, n))},
               source="keras:layers.MultiHeadAttention", expected_count=1,
               notes=f"keras.layers.MultiHeadAttention self-attention with attention_mask, a (B, Nq, Nk) bool input "
                     f"(True = attend, about 70% kept, every row keeps the first key); {SIZES}, seq {n}; Keras 3 "
                     f"(TF backend ops.dot_product_attention): einsum BTNH,BSNH->BNTS, * 1/sqrt(8), "
                     f"where(ones_like(scores) & mask[:, None], scores, -0.7 * 3.38953e38), softmax; tf2onnx "
                     f"writes the where as Add(Mul(Cast(m), s), Mul(c, Cast(Not(m))))")
    g = rng(2)
    n = 20
    yield dict(name="keras_mha_causal", build=build_self(n, causal=True), inputs={"x": randn(g, B, n, D)},
               source="keras:layers.MultiHeadAttention", expected_count=1,
               notes=f"keras.layers.MultiHeadAttention self-attention with use_causal_mask=True (no other mask: Keras "
                     f"calls ops.dot_product_attention(is_causal=True), the TF backend builds band_part(ones(T, S), "
                     f"-1, 0)); {SIZES}, seq {n}; tf2onnx folds the (B, H, T, S) causal mask into constants "
                     f"(float for the Mul with the scores, bool for the Not)")
    g = rng(3)
    nq, nk = 12, 20
    yield dict(name="keras_mha_cross", build=build_cross(nq, nk),
               inputs={"query": randn(g, B, nq, D), "context": randn(g, B, nk, D)},
               source="keras:layers.MultiHeadAttention", expected_count=1,
               notes=f"keras.layers.MultiHeadAttention cross-attention mha(query, context): key = value = context, "
                     f"query length {nq}, key length {nk}, no mask; {SIZES}")
    g = rng(4)
    n = 16
    pad = np.ones((B, n), dtype=bool)
    pad[1, 11:] = False  # second row: 11 tokens, then padding
    yield dict(name="keras_encoder", build=build_encoder(n),
               inputs={"x": randn(g, B, n, D), "padding_mask": pad},
               source="keras:functional encoder (LayerNormalization, MultiHeadAttention, Dense)", expected_count=2,
               notes=f"pre-LN encoder, 2 blocks: x + MHA(LN(x), attention_mask=padding_mask[:, None, :]), "
                     f"x + Dense(64) -> gelu(approximate=True) -> Dense(32) of LN(x) (the exact gelu is TF Erfc, which tf2onnx 1.17 does not convert), final LN; padding_mask (B, N) bool input, the "
                     f"second row padded after 11 tokens; {SIZES}, seq {n}; biases and LN betas random (stddev 0.1)")


def export_all(only: set) -> int:
    entries, failed = [], []
    for c in cases():
        if only and c["name"] not in only:
            continue
        log(f"=== {c['name']}")
        try:
            e = export_case(**c)
            entries.append(e)
            log(f"    ok: {e['attention_count']} attention, err {e['ort_max_abs_err']:.3g}, {e['size_bytes']} bytes, "
                f"opset {e['opset']}")
        except Exception as ex:  # noqa: BLE001
            import traceback

            traceback.print_exc(limit=4)
            shutil.rmtree(os.path.join(MODELS, c["name"]), ignore_errors=True)
            failed.append(c["name"])
    manifest.update(entries, [], "keras")
    log(f"keras: {len(entries)} exported, {len(failed)} failed {failed}")
    return 1 if failed else 0


# --------------------------------------------------------------------------
# --describe: the op chains around each Softmax
# --------------------------------------------------------------------------


def describe(path: str) -> list:
    m = onnx.load(path)
    try:
        m = onnx.shape_inference.infer_shapes(m)
    except Exception:  # noqa: BLE001
        pass
    g = m.graph
    prod = {o: n for n in g.node for o in n.output}
    cons: dict = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    graph_in = {i.name for i in g.input}
    shapes = {}
    for v in list(g.value_info) + list(g.input) + list(g.output):
        shapes[v.name] = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim]
    # real shapes (and the values of the computed Reshape targets): every
    # tensor made a graph output, run in ONNX Runtime on the test inputs
    runtime: dict = {}
    try:
        import onnxruntime as ort

        m2 = onnx.ModelProto()
        m2.CopyFrom(m)
        have = {o.name for o in m2.graph.output}
        for n in m2.graph.node:
            for o in n.output:
                if o and o not in have:
                    m2.graph.output.append(onnx.helper.make_empty_tensor_value_info(o))
        feeds = {}
        tdir = os.path.join(os.path.dirname(path), "test_data_set_0")
        for f in sorted(os.listdir(tdir)):
            if f.startswith("input_"):
                t = onnx.TensorProto()
                with open(os.path.join(tdir, f), "rb") as fh:
                    t.ParseFromString(fh.read())
                feeds[t.name] = numpy_helper.to_array(t)
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(m2.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        runtime = dict(zip(names, sess.run(names, feeds)))
        shapes = {k: list(v.shape) for k, v in runtime.items()}
    except Exception as e:  # noqa: BLE001
        log(f"(no runtime shapes: {e})")
    shape_ops = {"Shape", "Gather", "ReduceProd", "Concat", "Max"}

    def const_text(a):
        if a.size <= 8:
            vals = a.reshape(-1).tolist()
            if a.dtype == np.float32:
                vals = [float(np.float32(v)) for v in vals]
            return f"{a.dtype}{list(a.shape)}={vals}"
        desc = ""
        if a.ndim >= 2 and a.dtype.kind in "bf":
            b = a.astype(bool) if a.dtype == np.bool_ else a
            tri = np.tril(np.ones(a.shape[-2:], dtype=b.dtype))
            if np.all(b == b.reshape(-1)[0]):
                desc = f" all {b.reshape(-1)[0].item()}"
            elif np.all(b == tri):
                desc = " lower-triangular (causal)"
        return f"{a.dtype}{list(a.shape)}{desc}"

    def val(name):
        if name in inits:
            return const_text(inits[name])
        if name in graph_in:
            return f"input:{name}"
        p = prod.get(name)
        return f"{p.op_type}[{p.name}]" if p else name

    def attrs(n):
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in a.items()}
        if n.op_type == "Softmax" and "axis" not in a:
            a["axis"] = "default -1"
        return "" if not a else str(a)

    def line(n, indent):
        shp = shapes.get(n.output[0])
        return (f"{'  ' * indent}{n.op_type}[{n.name}]{attrs(n)}({', '.join(val(i) for i in n.input)})"
                + (f" -> {shp}" if shp is not None else ""))

    def up(name, indent, out, seen, stop_at_weights=True):
        """Producers of ``name``, depth first, down to the projection MatMul
        (one with a weight initializer); the Shape → Gather → Concat
        computations of Reshape targets are abbreviated."""
        p = prod.get(name)
        if p is None or p.name in seen:
            return
        seen.add(p.name)
        out.append(line(p, indent))
        if p.op_type in ("MatMul", "Gemm", "Einsum") and any(i in inits for i in p.input) and stop_at_weights:
            return
        for i in p.input:
            q = prod.get(i)
            if q is None:
                continue
            if q.op_type in shape_ops:
                tv = runtime.get(i)
                tv = f"={tv.tolist()}" if tv is not None else ""
                out.append(f"{'  ' * (indent + 1)}({val(i)}{tv}: Reshape target from Shape/Gather/Concat)")
                continue
            up(i, indent + 1, out, seen)

    lines = []
    for n in g.node:
        if n.op_type != "Softmax":
            continue
        lines.append(f"  {line(n, 0)}")
        lines.append("    scores <-")
        body: list = []
        up(n.input[0], 3, body, set())
        lines += body
        lines.append("    probabilities ->")
        cur = n
        found_pv = False
        for _ in range(12):
            nxt = [c for c in cons.get(cur.output[0], []) if c.op_type != "Shape"]
            if len(nxt) != 1:
                lines.append(f"      ({len(nxt)} consumers: {[c.op_type for c in nxt]})")
                break
            prev, cur = cur, nxt[0]
            lines.append(line(cur, 3))
            for i in cur.input:
                q = prod.get(i)
                if q is not None and i != prev.output[0] and q.op_type not in shape_ops:
                    sub: list = []
                    up(i, 4, sub, set())
                    lines += sub
            if cur.op_type in ("MatMul", "Gemm", "Einsum"):
                if any(i in inits for i in cur.input):
                    break  # the output projection
                found_pv = True
        if not found_pv:
            lines.append("      (no value product found)")
    return lines


def main(argv) -> int:
    if argv and argv[0] == "--describe":
        names = argv[1:] or sorted(d for d in os.listdir(MODELS) if d.startswith("keras_"))
        for name in names:
            print(name)
            for ln in describe(os.path.join(MODELS, name, "model.onnx")):
                print(ln)
        return 0
    return export_all(set(a for a in argv if not a.startswith("-")))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
