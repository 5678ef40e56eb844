#!/usr/bin/env python3
"""attnopt.FlashAttention (custom op, CPU) against ONNX Runtime's own
com.microsoft.MultiHeadAttention on the same shapes, in one process.

Each round runs both sides once, alternating which goes first; the figure is
attnopt time / MHA time, from the minima (and the medians) over the rounds.
Times are process CPU time by default (other jobs share this machine's cores;
CPU time only counts while this process runs), wall time with --wall.
Single-threaded by default: ORT intra_op_num_threads=1 and
ATTNOPT_NUM_THREADS=1 (set before the library loads).

  python3 kernels/bench/cpu_vs_ort.py --lib build/libattnopt_ort.so [--rounds 7]
  python3 kernels/bench/cpu_vs_ort.py --lib ... --one attnopt --shape d4-mask-10000
      (one side only, for peak memory under /usr/bin/time -v)

Needs numpy, onnx and onnxruntime (1.24.3 was used for kernels/README.md).
"""
import argparse
import os
import statistics
import sys

import ort_bench_common as common

SHAPES = {
    # name: heads, N, Dqk, Dv, bool mask (1,1,N,N), causal
    "mha-h8-d64-2048": (8, 2048, 64, 64, False, False),
    "sagan-d8-dv64-8192": (1, 8192, 8, 64, False, False),
    "d4-mask-h16-2048": (16, 2048, 4, 4, True, False),
    "causal-h4-d32-2048": (4, 2048, 32, 32, False, True),
    "d4-mask-10000": (16, 10000, 4, 4, True, False),
    "sagan-d8-dv64-16384": (1, 16384, 8, 64, False, False),
}
DEFAULT = ["mha-h8-d64-2048", "sagan-d8-dv64-8192", "d4-mask-h16-2048", "causal-h4-d32-2048"]


def build_models(name, onnx, helper, TensorProto):
    H, N, Dqk, Dv, mask, causal = SHAPES[name]
    f = TensorProto.FLOAT
    scale = 1.0 / (Dqk ** 0.5)
    # attnopt: (B, H, N, D) tensors, bool mask (1, 1, N, N).
    ins = [helper.make_tensor_value_info("q", f, [1, H, N, Dqk]),
           helper.make_tensor_value_info("k", f, [1, H, N, Dqk]),
           helper.make_tensor_value_info("v", f, [1, H, N, Dv])]
    names = ["q", "k", "v"]
    if mask:
        ins.append(helper.make_tensor_value_info("mask", TensorProto.BOOL, [1, 1, N, N]))
        names.append("mask")
    node = helper.make_node("FlashAttention", names, ["o"], domain="attnopt", scale=scale, causal=int(causal))
    g = helper.make_graph([node], "a", ins, [helper.make_tensor_value_info("o", f, [1, H, N, Dv])])
    ours = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("attnopt", 1)])
    ours.ir_version = 10
    # MHA: (B, N, H*D) tensors; the bool mask becomes attention_bias (1, 1, N, N).
    ins = [helper.make_tensor_value_info("q", f, [1, N, H * Dqk]),
           helper.make_tensor_value_info("k", f, [1, N, H * Dqk]),
           helper.make_tensor_value_info("v", f, [1, N, H * Dv])]
    names = ["q", "k", "v"]
    if mask:
        ins.append(helper.make_tensor_value_info("bias", f, [1, 1, N, N]))
        names += ["", "", "bias"]  # bias, key_padding_mask, attention_bias
    node = helper.make_node("MultiHeadAttention", names, ["o"], domain="com.microsoft", num_heads=H,
                            scale=scale, unidirectional=int(causal))
    g = helper.make_graph([node], "m", ins, [helper.make_tensor_value_info("o", f, [1, N, H * Dv])])
    mha = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    mha.ir_version = 10
    return ours, mha


def feeds(name, np, want_mha=True):
    H, N, Dqk, Dv, mask, causal = SHAPES[name]
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, (1, H, N, Dqk)).astype(np.float32)
    k = rng.uniform(-1, 1, (1, H, N, Dqk)).astype(np.float32)
    v = rng.uniform(-1, 1, (1, H, N, Dv)).astype(np.float32)
    ours = {"q": q, "k": k, "v": v}
    flat = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(1, N, -1))
    mha = {"q": flat(q), "k": flat(k), "v": flat(v)}
    if mask:  # 70 % attend; built without float64 temporaries (N = 10,000: 100 MB as bool)
        m = rng.integers(0, 10, size=(1, 1, N, N), dtype=np.uint8) < 7
        ours["mask"] = m
        if want_mha:
            mha["bias"] = np.where(m, np.float32(0), np.float32(-np.inf))
    return ours, mha


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, help="libattnopt_ort.so")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="default: the four of issue 14")
    ap.add_argument("--one", choices=["attnopt", "mha"], help="run one side only (memory measurement)")
    ap.add_argument("--wall", action="store_true", help="wall time instead of process CPU time")
    ap.add_argument("--check", action="store_true", help="compare the two outputs")
    a = ap.parse_args()
    os.environ["ATTNOPT_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    so = common.session_options(ort, a.lib, a.threads)
    print(f"{common.describe(ort, a.threads, a.wall)}; {a.rounds} interleaved rounds")
    print("| shape | attnopt min ms | MHA min ms | ratio of minima | ratio of medians |")
    print("|---|---:|---:|---:|---:|")
    for name in a.shape or DEFAULT:
        m_ours, m_mha = build_models(name, onnx, helper, TensorProto)
        f_ours, f_mha = feeds(name, np, want_mha=a.one != "attnopt")
        sides = {}
        if a.one in (None, "attnopt"):
            sides["attnopt"] = (ort.InferenceSession(m_ours.SerializeToString(), so, providers=["CPUExecutionProvider"]), f_ours)
        if a.one in (None, "mha"):
            sides["mha"] = (ort.InferenceSession(m_mha.SerializeToString(), so, providers=["CPUExecutionProvider"]), f_mha)
        outs = {k: s.run(None, f)[0] for k, (s, f) in sides.items()}  # warm-up
        if a.check and len(outs) == 2:
            H, N, Dqk, Dv, _, _ = SHAPES[name]
            ref = outs["mha"].reshape(1, N, H, Dv).transpose(0, 2, 1, 3)
            err = np.linalg.norm(outs["attnopt"] - ref) / np.linalg.norm(ref)
            print(f"{name}: relative L2 difference attnopt vs MHA {err:.2e}", file=sys.stderr)
        runs = {k: (lambda s=s, f=f: s.run(None, f)) for k, (s, f) in sides.items()}
        times = common.interleaved(runs, a.rounds, common.clock(a.wall))
        if len(sides) == 1:
            (k, t), = times.items()
            print(f"| {name} ({k} only) | {min(t) * 1e3:.1f} | | | |")
            continue
        ta, tm = times["attnopt"], times["mha"]
        print(f"| {name} | {min(ta) * 1e3:.1f} | {min(tm) * 1e3:.1f} | {min(ta) / min(tm):.2f} | "
              f"{statistics.median(ta) / statistics.median(tm):.2f} |", flush=True)


if __name__ == "__main__":
    main()
