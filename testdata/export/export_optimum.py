"""Real Hugging Face Optimum ONNX exports of tiny decoders (random init).

export_causal.py's optimum_* fixtures rebuild Optimum's export-time mask by
hand, beside transformers 5.24.  These fixtures are what Optimum itself writes
(``optimum.exporters.onnx.main_export``, optimum 2.1 + optimum-onnx 0.1, which
pin transformers 4.57): a tiny GPT-2, GPT-NeoX and Qwen3 causal LM is saved with
``save_pretrained`` and exported for the tasks ``text-generation`` and
``text-generation-with-past``, at the opset and with the exporter Optimum picks
(TorchScript, opset 18 here).

Each export is run with ONNX Runtime on seeded, left-padded inputs (batch 2;
the second row's first 2 positions are padding) and compared with the
transformers model on the same inputs (the same cache for the with-past
exports); the fixture directory gets ``model.onnx`` and ``test_data_set_0``.
Manifest entries are merged into ``testdata/MANIFEST.json`` (manifest.py).

It needs its own virtual environment (``requirements-optimum.txt``):

    python3.11 -m venv /tmp/venv-optimum
    /tmp/venv-optimum/bin/pip install -r testdata/export/requirements-optimum.txt
    /tmp/venv-optimum/bin/python testdata/export/export_optimum.py [NAME ...]
    /tmp/venv-optimum/bin/python testdata/export/export_optimum.py --chains FILE.onnx ...

``--chains`` prints, for the first attention of each file, every node between
the graph inputs and the node that applies the mask to the scores.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from importlib.metadata import version

import numpy as np
import onnx
import torch
from onnx import numpy_helper

import manifest
from common import MAX_MODEL_BYTES, MODELS, TESTDATA, AttnRecorder, default_attention_info, log, seed
from onnxfix import ATTN_OPS, graph_dims, np_dtype_name, onnx_op_counts, opset_of, run_ort, write_test_data


LAYERS, HIDDEN, HEADS, HEAD_DIM, VOCAB, MAX_POS = 2, 32, 4, 8, 100, 64
BATCH, SEQ, PAST, NEW, PAD = 2, 6, 8, 2, 2


def build(kind: str):
    """A tiny random causal LM of this family (seeded)."""
    from transformers import (GPT2Config, GPT2LMHeadModel, GPTNeoXConfig, GPTNeoXForCausalLM, Qwen3Config,
                              Qwen3ForCausalLM)

    seed(0)
    if kind == "gpt2":
        cfg = GPT2Config(vocab_size=VOCAB, n_positions=MAX_POS, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS)
        return GPT2LMHeadModel(cfg), HEADS
    if kind == "neox":
        cfg = GPTNeoXConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                            num_attention_heads=HEADS, intermediate_size=64, max_position_embeddings=MAX_POS)
        return GPTNeoXForCausalLM(cfg), HEADS
    cfg = Qwen3Config(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=LAYERS,
                      num_attention_heads=HEADS, num_key_value_heads=2, head_dim=HEAD_DIM,
                      max_position_embeddings=MAX_POS)
    return Qwen3ForCausalLM(cfg), 2


def make_inputs(kv_heads: int, past: bool) -> dict:
    """Seeded, left-padded inputs: row 1's first PAD positions are padding.
    position_ids as transformers' generate makes them (cumsum − 1, 1 on pads)."""
    g = torch.Generator().manual_seed(0)
    new = NEW if past else SEQ
    total = PAST + new if past else SEQ
    ids = torch.randint(0, VOCAB, (BATCH, new), generator=g)
    mask = torch.ones(BATCH, total, dtype=torch.int64)
    mask[1, :PAD] = 0
    pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)[:, total - new:]
    feeds = {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
    if past:
        for i in range(LAYERS):
            for kv in ("key", "value"):
                feeds[f"past_key_values.{i}.{kv}"] = torch.randn(BATCH, kv_heads, PAST, HEAD_DIM, generator=g)
    return feeds


def reference(model, feeds: dict, past: bool):
    """The transformers model on the same inputs: logits (+ present.* for past)
    and the attention records."""
    from transformers import DynamicCache

    kwargs = {k: feeds[k] for k in ("input_ids", "attention_mask", "position_ids")}
    if past:
        cache = DynamicCache()
        for i in range(LAYERS):
            cache.update(feeds[f"past_key_values.{i}.key"].clone(), feeds[f"past_key_values.{i}.value"].clone(), i)
        kwargs.update(past_key_values=cache, use_cache=True)
    else:
        kwargs.update(use_cache=False)
    rec = AttnRecorder(model)
    with torch.no_grad(), rec:
        out = model(**kwargs)
    res = {"logits": out.logits.numpy()}
    if past:
        pkv = out.past_key_values
        for i in range(LAYERS):
            k, v = (pkv[i][0], pkv[i][1]) if not hasattr(pkv, "layers") else (pkv.layers[i].keys, pkv.layers[i].values)
            res[f"present.{i}.key"], res[f"present.{i}.value"] = k.numpy(), v.numpy()
    return res, rec.records


def export_one(name: str, kind: str, past: bool) -> dict:
    from optimum.exporters.onnx import main_export
    from transformers import AutoModelForCausalLM

    task = "text-generation-with-past" if past else "text-generation"
    model, kv_heads = build(kind)
    cls = type(model).__name__
    outdir = os.path.join(MODELS, name)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(os.path.join(outdir, "test_data_set_0"))
    path = os.path.join(outdir, "model.onnx")
    with tempfile.TemporaryDirectory() as td:
        src, dst = os.path.join(td, "hf"), os.path.join(td, "onnx")
        model.save_pretrained(src)
        main_export(src, output=dst, task=task, device="cpu")
        files = sorted(f for f in os.listdir(dst) if f.endswith(".onnx") or f.endswith(".onnx_data"))
        if files != ["model.onnx"]:
            raise RuntimeError(f"Optimum wrote {files}, expected one model.onnx")
        proto = onnx.load(os.path.join(dst, "model.onnx"))
        for init in proto.graph.initializer:
            if init.data_location == onnx.TensorProto.EXTERNAL:
                raise RuntimeError("model has external data")
        onnx.checker.check_model(proto)
        shutil.copy(os.path.join(dst, "model.onnx"), path)
        # the reference: the saved model, loaded as Optimum loads it (default attention implementation)
        ref_model = AutoModelForCausalLM.from_pretrained(src).eval()
    size = os.path.getsize(path)
    if size >= MAX_MODEL_BYTES:
        raise RuntimeError(f"model.onnx is {size} bytes (limit {MAX_MODEL_BYTES})")

    feeds_t = make_inputs(kv_heads, past)
    init_names = {i.name for i in proto.graph.initializer}
    graph_inputs = [i.name for i in proto.graph.input if i.name not in init_names]
    missing = [n for n in graph_inputs if n not in feeds_t]
    if missing:
        raise RuntimeError(f"no test input for graph inputs {missing}")
    feeds = {n: feeds_t[n].numpy() for n in graph_inputs}
    expected, records = reference(ref_model, feeds_t, past)

    out_names, ort_outs = run_ort(path, feeds)
    _, ort_outs2 = run_ort(path, feeds)
    deterministic = all(np.array_equal(a, b) for a, b in zip(ort_outs, ort_outs2))
    if not deterministic:
        raise RuntimeError("ONNX Runtime outputs differ between two runs")
    errs = {}
    for n, a in zip(out_names, ort_outs):
        b = expected[n]
        if a.shape != b.shape:
            raise RuntimeError(f"{n}: ORT shape {a.shape} != PyTorch {b.shape}")
        errs[n] = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
    err = max(errs.values())
    if not err <= 1e-4:
        raise RuntimeError(f"ORT max abs err {errs}")

    write_test_data(outdir, [(n, feeds[n]) for n in graph_inputs], [(n, expected[n]) for n in out_names])

    if len(records) != LAYERS:
        raise RuntimeError(f"recorder counted {len(records)} attention computations, expected {LAYERS}")
    prefix = {"gpt2": "transformer.", "neox": "gpt_neox.", "qwen3": "model."}[kind]
    items = []
    for r in records:
        r["module"] = r["module"][len(prefix):] if r["module"] and r["module"].startswith(prefix) else r["module"]
        # heads from the query; the key/value heads of a GQA model before repeat_kv
        items.append(default_attention_info(r, {"head_dim": HEAD_DIM, "kv_heads": kv_heads, "mask": "causal"}))
    attn_impl = ref_model.config._attn_implementation
    total = PAST + NEW if past else SEQ
    shape_note = (f"decoder with past: {PAST} cached positions as inputs, {NEW} new tokens" if past
                  else f"batch {BATCH}, seq {SEQ}")
    notes = (f"the real Optimum export: optimum {version('optimum')}, optimum-onnx {version('optimum-onnx')}, "
             f"transformers {version('transformers')}, onnxruntime {version('onnxruntime')}; main_export(task="
             f"'{task}') of a random {cls} (2 layers, hidden 32, {HEADS} heads of {HEAD_DIM}, {kv_heads} kv heads, "
             f"vocab {VOCAB}, {attn_impl} attention at export), Optimum's TorchScript exporter and default opset; "
             f"{shape_note}; attention_mask ({BATCH}, {total}) left-padded: row 1's first {PAD} positions are padding; "
             f"position_ids = cumsum(mask) - 1 (1 on pads); ort_max_abs_err over all outputs (logits "
             f"{errs['logits']:.3g}); ONNX Runtime outputs identical over two runs")
    return {
        "name": name,
        "file": os.path.relpath(path, TESTDATA),
        "source": f"optimum:{cls}",
        "exporter": "optimum",
        "opset": opset_of(proto),
        "torch_version": torch.__version__,
        "dtype": "float32",
        "inputs": [{"name": n, "shape": list(feeds[n].shape), "dtype": np_dtype_name(feeds[n])} for n in graph_inputs],
        "symbolic_shapes": {v.name: graph_dims(v) for v in list(proto.graph.input) + list(proto.graph.output)
                            if v.name not in init_names and any(isinstance(d, str) or d is None
                                                                 for d in graph_dims(v))} or None,
        "outputs": [{"name": n, "shape": list(expected[n].shape), "dtype": np_dtype_name(expected[n])}
                    for n in out_names],
        "attention_count": len(records),
        "attention_counted_in": ["eager_forward"],
        "attention": items,
        "fusable_count": len(items),
        "ort_max_abs_err": err,
        "size_bytes": size,
        "onnx_ops": {k: v for k, v in sorted(onnx_op_counts(proto).items()) if k in ATTN_OPS},
        "notes": notes,
    }


# ------------------------------------------------------------------ chains


def _attr(a):
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, onnx.TensorProto):
        return _const(numpy_helper.to_array(v))
    if isinstance(v, bytes):
        v = v.decode()
    return v


def _const(arr: np.ndarray) -> str:
    if arr.size <= 8:
        return f"{arr.dtype}{list(arr.shape)}={arr.tolist()}"
    desc = ""
    if arr.ndim >= 2 and arr.shape[-1] == arr.shape[-2]:
        m = arr.reshape(-1, arr.shape[-2], arr.shape[-1])[0]
        if np.array_equal(m != 0, np.tril(np.ones_like(m, dtype=bool))):
            desc = " lower-triangular ones"
        elif np.array_equal(m != 0, np.triu(np.ones_like(m, dtype=bool), 1)):
            desc = " strictly-upper-triangular"
    return f"{arr.dtype}{list(arr.shape)}{desc} min={arr.min()} max={arr.max()}"


def mask_chain(path: str, which: int = 0) -> list[str]:
    """Nodes from the graph inputs to the node that adds the mask to the
    scores before the which-th Softmax, in graph order."""
    m = onnx.load(path)
    g = m.graph
    try:
        m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    except Exception:  # noqa: BLE001
        pass
    shapes = {v.name: graph_dims(v) for v in list(m.graph.value_info) + list(g.input) + list(g.output)}
    prod = {o: n for n in g.node for o in n.output}
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    order = {id(n): i for i, n in enumerate(g.node)}
    softmax = [n for n in g.node if n.op_type == "Softmax"][which]

    # the node before the Softmax that joins the scores (a MatMul path) with the mask
    def has_matmul(name, depth=6):
        n = prod.get(name)
        if n is None or depth == 0:
            return False
        return n.op_type == "MatMul" or any(has_matmul(i, depth - 1) for i in n.input if i)

    apply = prod[softmax.input[0]]
    while apply.op_type not in ("Add", "Where") or not any(not has_matmul(i) and i not in inits for i in apply.input):
        apply = prod[[i for i in apply.input if i and has_matmul(i)][0]]
    mask_inputs = [i for i in apply.input if i and not has_matmul(i)]

    seen, nodes = set(), []

    def walk(name):
        n = prod.get(name)
        if n is None or id(n) in seen:
            return
        seen.add(id(n))
        for i in n.input:
            # a Shape of an activation: its dims only, not the computation behind it
            if i and not (n.op_type == "Shape" and i in prod):
                walk(i)
        nodes.append(n)

    for i in mask_inputs:
        walk(i)
    nodes.sort(key=lambda n: order[id(n)])
    short = {}

    def nm(x, shape_of=False):
        if shape_of and x in prod and prod[x].op_type != "Constant":
            return f"<{prod[x].op_type} {x}>"
        if x in inits:
            return f"init:{_const(inits[x])}"
        p = prod.get(x)
        if p is not None and p.op_type == "Constant":
            return f"const:{_attr(p.attribute[0])}"
        if p is None:
            return f"INPUT:{x}"
        if x not in short:
            short[x] = f"%{len(short)}"
        return short[x]

    lines = [f"{os.path.relpath(path)}  softmax {softmax.name}: mask applied by {apply.op_type} {apply.name} "
             f"(inputs {', '.join(nm(i) if i in mask_inputs else 'scores' for i in apply.input)})"]
    for n in nodes:
        if n.op_type == "Constant":
            continue
        attrs = {a.name: _attr(a) for a in n.attribute}
        outs = ", ".join(nm(o) for o in n.output)
        shp = shapes.get(n.output[0])
        args = ", ".join(nm(i, n.op_type == "Shape") for i in n.input if i)
        lines.append(f"  {outs} = {n.op_type}({args})"
                     f"{' ' + str(attrs) if attrs else ''}{'  :' + str(shp) if shp else ''}")
    lines.append(f"  -> {apply.op_type}({', '.join(nm(i) if i in mask_inputs else 'scores' for i in apply.input)})"
                 f" -> Softmax")
    return lines


# ------------------------------------------------------------------ main

CASES = [(f"optimum_real_{k}{'_past' if p else ''}", k, p) for k in ("gpt2", "neox", "qwen3") for p in (False, True)]


def main():
    args = sys.argv[1:]
    if args and args[0] == "--chains":
        for p in args[1:]:
            print("\n".join(mask_chain(p)))
        return
    only = set(args)
    entries, failed = [], []
    for name, kind, past in CASES:
        if only and name not in only:
            continue
        log(f"=== {name}")
        try:
            e = export_one(name, kind, past)
        except Exception as ex:  # noqa: BLE001
            log(f"    FAILED: {type(ex).__name__}: {ex}")
            shutil.rmtree(os.path.join(MODELS, name), ignore_errors=True)
            failed.append(name)
            continue
        log(f"    ok: opset {e['opset']}, {e['size_bytes']} bytes, err {e['ort_max_abs_err']:.3g}")
        entries.append(e)
    manifest.update(entries, [], "optimum")
    if failed:
        log(f"failed: {failed}")
        sys.exit(1)


if __name__ == "__main__":
    main()
