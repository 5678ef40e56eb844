#!/usr/bin/env python3
"""attnopt.FlashAttention through ONNX Runtime's CUDA execution provider, once.

Builds one-node models (domain attnopt, see docs of kernels/README.md), loads
libattnopt_ort.so with register_custom_ops_library, runs them with
providers=[CUDAExecutionProvider], checks the output against a float64 NumPy
reference and, from ORT's profile, that the node really ran on the CUDA EP.
Prints why and exits 0 when the installed onnxruntime has no CUDA EP (the
plain `onnxruntime` wheel is CPU-only), so the GPU check still finishes.
Usage: ort_cuda_check.py --lib build/libattnopt_ort.so
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

import numpy as np


def reference(q, k, v, scale, mask, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, 1), np.repeat(v, rep, 1)
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    if causal:
        nq, nk = s.shape[-2:]
        s = np.where(np.arange(nk)[None, :] > np.arange(nq)[:, None] + (nk - nq), -np.inf, s)
    mx = np.max(s, -1, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0)
    p = np.exp(s - mx)
    den = p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", p, v) / np.where(den > 0, den, 1)


def model(dtype, qs, ks, vs, mask_shape, scale, causal):
    from onnx import TensorProto, helper
    elem = {np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT}[dtype]
    ins = [helper.make_tensor_value_info(n, elem, s) for n, s in (("Q", qs), ("K", ks), ("V", vs))]
    names = ["Q", "K", "V"]
    if mask_shape:
        ins.append(helper.make_tensor_value_info("M", TensorProto.BOOL, mask_shape))
        names.append("M")
    node = helper.make_node("FlashAttention", names, ["O"], domain="attnopt", scale=scale, causal=int(causal))
    out = helper.make_tensor_value_info("O", elem, list(qs[:-1]) + [vs[-1]])
    g = helper.make_graph([node], "flash", ins, [out])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("attnopt", 1)])
    m.ir_version = 10
    return m.SerializeToString()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    args = ap.parse_args()
    try:
        import onnxruntime as ort
    except ImportError as e:
        print(f"ORT CUDA EP: not checked, onnxruntime not importable ({e})")
        return 0
    try:  # the CUDA provider's cuBLAS/cuDNN from the nvidia-* wheels (onnxruntime-gpu's way)
        ort.preload_dlls()
    except Exception as e:
        print(f"(preload_dlls: {e})")
    provs = ort.get_available_providers()
    print(f"onnxruntime {ort.__version__}, providers {provs}")
    if "CUDAExecutionProvider" not in provs:
        print("ORT CUDA EP: not checked, this onnxruntime has no CUDAExecutionProvider")
        return 0
    if not os.path.exists(args.lib):
        print(f"ORT CUDA EP: FAILED, {args.lib} was not built")
        return 1
    rng = np.random.default_rng(7)
    failed = 0
    cases = [  # (dtype, B, Hq, Hkv, N, D, mask, causal)
        (np.float16, 1, 8, 8, 1000, 64, True, False),
        (np.float16, 2, 8, 2, 777, 128, False, True),
        (np.float32, 1, 4, 4, 512, 32, False, False),
    ]
    for dt, b, hq, hkv, n, d, use_mask, causal in cases:
        q = rng.standard_normal((b, hq, n, d)).astype(dt)
        k = rng.standard_normal((b, hkv, n, d)).astype(dt)
        v = rng.standard_normal((b, hkv, n, d)).astype(dt)
        mask = rng.random((1, 1, n, n)) < 0.8 if use_mask else None
        scale = 1.0 / math.sqrt(d)
        so = ort.SessionOptions()
        so.register_custom_ops_library(args.lib)
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ortprof")
        sess = ort.InferenceSession(model(dt, q.shape, k.shape, v.shape, mask.shape if use_mask else None, scale,
                                          causal), so, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        feed = {"Q": q, "K": k, "V": v}
        if use_mask:
            feed["M"] = mask
        sess.run(None, feed)  # warm-up
        t0 = time.perf_counter()
        out = sess.run(None, feed)[0]
        ms = (time.perf_counter() - t0) * 1e3
        prof = json.load(open(sess.end_profiling()))
        eps = {e.get("args", {}).get("provider") for e in prof if "FlashAttention" in e.get("name", "")}
        eps.discard(None)
        ref = reference(q, k, v, scale, mask, causal)
        o = out.astype(np.float64)
        err = np.linalg.norm(o - ref) / np.linalg.norm(ref) if np.isfinite(o).all() else math.inf
        tol = 2e-3 if dt == np.float16 else 1e-4
        ok = err <= tol and eps == {"CUDAExecutionProvider"}
        failed += not ok
        print(f"ORT CUDA EP {np.dtype(dt).name} B={b} H={hq}/{hkv} N={n} d={d} mask={use_mask} causal={causal}: "
              f"rel err {err:.2e} (tol {tol:g}), ran on {sorted(eps)}, {ms:.2f} ms incl. copies -> "
              f"{'ok' if ok else 'FAILED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
