#!/usr/bin/env python3
"""Sites fused per fixture: attnopt vs ONNX Runtime's transformers optimizer
and onnxscript's ONNX Runtime fusions.

For every model in testdata/MANIFEST.json this runs
`onnxruntime.transformers.optimizer.optimize_model` with the model_type that
fits the architecture (unet, vae, gpt2, clip, swin, vit, else bert — the
generic fusion), num_heads/hidden_size 0 (detect) and opt_level 0 (the Python
fusions only; higher levels need torch), and
`onnxscript.rewriter.ort_fusions.optimize_for_ort` (the fusions the dynamo
exporter's users are pointed to) and `attnopt rewrite --target ort --min-scores 0`, counts
the attention ops each one leaves in the graph, and times them. attnopt's
time includes the process start.
Usage: python3 bench/ort_optimizer.py [path/to/attnopt [FIXTURE ...]] (only
those fixtures when named)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import logging

import onnx
import onnx_ir as ir
from onnxruntime.transformers.optimizer import optimize_model
from onnxscript.rewriter.ort_fusions import optimize_for_ort

FUSED = {"Attention", "MultiHeadAttention", "GroupQueryAttention", "PackedAttention",
         "PackedMultiHeadAttention", "FlashAttention"}

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
attnopt = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "attnopt")
logging.disable(logging.WARNING)


def model_type(name):
    for key, typ in (("unet", "unet"), ("vae", "vae"), ("gpt2", "gpt2"), ("clip", "clip"),
                     ("swin", "swin"), ("vit", "vit")):
        if key in name:
            return typ
    return "bert"


def fused_ops(model):
    return sum(1 for n in model.graph.node if n.op_type in FUSED)


def main():
    manifest = json.load(open(os.path.join(root, "testdata", "MANIFEST.json")))
    rows = []
    tmp = tempfile.mkdtemp()
    only = set(sys.argv[2:])
    for fx in manifest["models"]:
        if only and fx["name"] not in only:
            continue
        path = os.path.join(root, "testdata", fx["file"])
        before = fused_ops(onnx.load(path))
        want = fx.get("fusable_count", fx["attention_count"])
        t0 = time.perf_counter()
        try:
            opt = optimize_model(path, model_type=model_type(fx["name"]), num_heads=0, hidden_size=0, opt_level=0)
            ort_n = fused_ops(opt.model) - before
            ort_err = ""
        except Exception as e:  # the optimizer rejects some graphs outright
            ort_n, ort_err = 0, type(e).__name__
        t_ort = time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            fused, _ = optimize_for_ort(ir.serde.deserialize_model(onnx.load(path)))
            os_n = fused_ops(ir.serde.serialize_model(fused)) - before
            os_err = ""
        except Exception as e:  # noqa: BLE001
            os_n, os_err = 0, type(e).__name__
        t_os = time.perf_counter() - t0
        out = os.path.join(tmp, fx["name"] + ".onnx")
        t0 = time.perf_counter()
        r = subprocess.run([attnopt, "rewrite", path, "--target", "ort", "--min-scores", "0", "-o", out, "--quiet"],
                           capture_output=True, text=True)
        t_attn = time.perf_counter() - t0
        attn_n = fused_ops(onnx.load(out)) - before if r.returncode == 0 else 0
        rows.append((fx["name"], want, before, attn_n, t_attn, ort_n, t_ort, ort_err, os_n, t_os, os_err))
    print("| model | attention (PyTorch) | already fused | attnopt fused | attnopt s | ORT optimizer fused | ORT optimizer s "
          "| onnxscript fused | onnxscript s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, want, pre, a, ta, o, to, err, x, tx, xerr in rows:
        note = f" ({err})" if err else ""
        xnote = f" ({xerr})" if xerr else ""
        print(f"| {name} | {want} | {pre} | {a} | {ta:.2f} | {o}{note} | {to:.2f} | {x}{xnote} | {tx:.2f} |")
    tot = [sum(r[i] for r in rows) for i in (1, 2, 3, 5, 8)]
    print(f"| **total** | {tot[0]} | {tot[1]} | {tot[2]} | {sum(r[4] for r in rows):.1f} | {tot[3]} | "
          f"{sum(r[6] for r in rows):.1f} | {tot[4]} | {sum(r[9] for r in rows):.1f} |")


if __name__ == "__main__":
    main()
