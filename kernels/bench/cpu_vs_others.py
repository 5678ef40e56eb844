#!/usr/bin/env python3
"""attnopt.FlashAttention (the ONNX Runtime custom op, CPU) against ONNX
Runtime's com.microsoft.MultiHeadAttention and GroupQueryAttention and
PyTorch's scaled_dot_product_attention, on the shape table of
bench/cpu_ab_driver.cpp, in one process.

Each round runs every side once, the order rotated by one side per round;
per shape it prints min and median per side (ms) and attnopt's time over the
fastest other side's (below 1: attnopt is faster), of the minima and of the
medians. Process CPU time by default (the machine is shared), wall time with
--wall; spinning thread pools are turned off on every side (ORT
allow_spinning 0, OMP_WAIT_POLICY=PASSIVE), so CPU time counts work, not
waiting. A sample of a short call is a batch of calls (about 50 ms).

Sides that do not apply are left out: GroupQueryAttention needs Dqk = Dv and
is causal only: it runs the causal prefill shapes, and the decoding shapes
(a causal single query sees every key) as a generation loop runs it, one KV
buffer bound as both past and present through IOBinding (gqa_decode_side);
MHA is skipped where its score tensor would exceed --max-scores-gib (the
seed case: 6.4 GB). MHA gets GQA's K/V repeated per query head; bool masks as a float attention_bias, key padding as
key_padding_mask.

  python kernels/bench/cpu_vs_others.py --lib kernels/build/cpu/libattnopt_ort.so \\
      [--threads 1] [--rounds 5] [--shape NAME ...] [--quick]

Needs numpy, onnx, onnxruntime and torch (testdata/export/requirements.txt).
"""
import argparse
import os
import statistics
import sys
import time

# name: B, Hq, Hkv, Nq, Nk, Dqk, Dv, mask (none | bool | pad | lpad: left-padded keys), causal, dtype, quick (Nq, Nk)
SHAPES = {
    "seed h16 d4 bool N10000": (1, 16, 16, 10000, 10000, 4, 4, "bool", False, "f32", (2048, 2048)),
    "d64 h4 N8192": (1, 4, 4, 8192, 8192, 64, 64, "none", False, "f32", (1024, 1024)),
    "d128 h1 N16384": (1, 1, 1, 16384, 16384, 128, 128, "none", False, "f32", (2048, 2048)),
    "sagan 8/64 N16384": (1, 1, 1, 16384, 16384, 8, 64, "none", False, "f32", (4096, 4096)),
    "causal gqa 32/8 d128 N2048": (1, 32, 8, 2048, 2048, 128, 128, "none", True, "f32", (512, 512)),
    "key padding b8 h12 d64 N512": (8, 12, 12, 512, 512, 64, 64, "pad", False, "f32", (128, 128)),
    "bert f16 b8 h12 d64 N512": (8, 12, 12, 512, 512, 64, 64, "none", False, "f16", (128, 128)),
    "bert f32 b8 h12 d64 N512": (8, 12, 12, 512, 512, 64, 64, "none", False, "f32", (128, 128)),
    "tiny vit h4 d16 N17": (1, 4, 4, 17, 17, 16, 16, "none", False, "f32", (17, 17)),
    "decode 32/8 d128 Nk4096": (1, 32, 8, 1, 4096, 128, 128, "none", False, "f32", (1, 4096)),
    "decode 32/8 d128 Nk32768": (1, 32, 8, 1, 32768, 128, 128, "none", False, "f32", (1, 8192)),
    # Held out (issue 37): shapes of models the table was not tuned on.
    "whisper enc h6 d64 N1500": (1, 6, 6, 1500, 1500, 64, 64, "none", False, "f32", (512, 512)),
    "decode 32/8 d128 Nk8192": (1, 32, 8, 1, 8192, 128, 128, "none", False, "f32", (1, 2048)),
    "phi-2 causal h32 d80 N2048": (1, 32, 32, 2048, 2048, 80, 80, "none", True, "f32", (256, 256)),
    "phi-3 causal h32 d96 N2048": (1, 32, 32, 2048, 2048, 96, 96, "none", True, "f32", (256, 256)),
    "gemma causal 8/4 d256 N2048": (1, 8, 4, 2048, 2048, 256, 256, "none", True, "f32", (256, 256)),
    "sd cross h8 d40 Nq4096 Nk77": (1, 8, 8, 4096, 77, 40, 40, "none", False, "f32", (1024, 77)),
    "left-padded b4 h12 d64 N512": (4, 12, 12, 512, 512, 64, 64, "lpad", False, "f32", (128, 128)),
    "cpa3d 16^3 h4 d32": (1, 4, 4, 4096, 4096, 32, 32, "none", False, "f32", (1024, 1024)),
    "cpa3d 24^3 h4 d32": (1, 4, 4, 13824, 13824, 32, 32, "none", False, "f32", (2048, 2048)),
    "whisper enc f16 h6 d64 N1500": (1, 6, 6, 1500, 1500, 64, 64, "none", False, "f16", (512, 512)),
    # bf16: ONNX Runtime has no bf16 CPU attention, so PyTorch's SDPA is the bar.
    "bert bf16 b8 h12 d64 N512": (8, 12, 12, 512, 512, 64, 64, "none", False, "bf16", (128, 128)),
    "causal gqa bf16 32/8 d128 N2048": (1, 32, 8, 2048, 2048, 128, 128, "none", True, "bf16", (512, 512)),
}

# bf16 arrays are uint16 holding the bits (numpy has no bf16); BF16 marks them in dims.
BF16 = "bf16"


def to_bf16(np, x):
    """float32 -> bf16 bits, rounded to nearest even."""
    u = x.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(np, b):
    return (b.astype(np.uint32) << 16).view(np.float32)


PAD = ("pad", "lpad")  # key padding masks: (B, Nk) keep flags


def key_padding(np, b, nk, left=False):
    """(B, Nk) keep flags: batch i keeps its first Nk - i * Nk / 16 keys (as cpu_ab_driver), or with left its
    last ones (a left-padded batch, as decoders batch prompts)."""
    j = np.arange(nk)[None, :]
    keep = j < (nk - np.arange(b)[:, None] * nk // 16)
    return keep[:, ::-1].copy() if left else keep


def make_inputs(np, shape, quick):
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, dt, qs = shape
    if quick:
        nq, nk = qs
    rng = np.random.default_rng(0)
    ft = {"f16": np.float16, "bf16": BF16}.get(dt, np.float32)
    cast = (lambda x: to_bf16(np, x)) if ft == BF16 else (lambda x: x.astype(ft))
    q = cast(rng.uniform(-1, 1, (b, hq, nq, dqk)))
    k = cast(rng.uniform(-1, 1, (b, hkv, nk, dqk)))
    v = cast(rng.uniform(-1, 1, (b, hkv, nk, dv)))
    m = None
    if mask == "bool":  # (1, 1, Nq, Nk), 70 % attend
        m = rng.integers(0, 10, size=(1, 1, nq, nk), dtype=np.uint8) < 7
    elif mask in PAD:
        m = key_padding(np, b, nk, left=mask == "lpad")
    return (b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft), q, k, v, m


def op_session(ort, helper, so, node, ins, outs):
    """An ORT CPU session of a one-node model (the node's domain at version 1)."""
    g = helper.make_graph([node], node.op_type, ins, outs)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(node.domain, 1)])
    model.ir_version = 10
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def attnopt_side(np, ort, onnx, helper, so, dims, q, k, v, m):
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
    if ft == BF16:
        return attnopt_bf16_side(np, ort, onnx, helper, so, dims, q, k, v)
    et = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(ft))
    ins = [helper.make_tensor_value_info("q", et, q.shape), helper.make_tensor_value_info("k", et, k.shape),
           helper.make_tensor_value_info("v", et, v.shape)]
    feed = {"q": q, "k": k, "v": v}
    if m is not None:
        mm = m if mask == "bool" else m.reshape(b, 1, 1, nk)
        ins.append(helper.make_tensor_value_info("mask", onnx.TensorProto.BOOL, mm.shape))
        feed["mask"] = mm
    node = helper.make_node("FlashAttention", list(feed), ["o"], domain="attnopt", scale=dqk ** -0.5,
                            causal=int(causal))
    s = op_session(ort, helper, so, node, ins, [helper.make_tensor_value_info("o", et, [b, hq, nq, dv])])
    return lambda: s.run(None, feed)[0]


def flat(np, x):  # (B, H, N, D) -> (B, N, H*D)
    b, h, n, d = x.shape
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(b, n, h * d))


def unflat(np, o, h):  # (B, N, H*D) -> (B, H, N, D)
    b, n, hd = o.shape
    return o.reshape(b, n, h, hd // h).transpose(0, 2, 1, 3)


def mha_side(np, ort, onnx, helper, so, dims, q, k, v, m):
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
    et = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(ft))
    rep = hq // hkv
    feed = {"q": flat(np, q), "k": flat(np, np.repeat(k, rep, axis=1)), "v": flat(np, np.repeat(v, rep, axis=1))}
    names = ["q", "k", "v"]
    ins = [helper.make_tensor_value_info(n, et, feed[n].shape) for n in names]
    if mask == "bool":
        feed["bias"] = np.where(m, 0, -np.inf).astype(ft)
        ins.append(helper.make_tensor_value_info("bias", et, feed["bias"].shape))
        names += ["", "", "bias"]  # bias, key_padding_mask, attention_bias
    elif mask in PAD:
        feed["kpm"] = m.astype(np.int32)
        ins.append(helper.make_tensor_value_info("kpm", onnx.TensorProto.INT32, feed["kpm"].shape))
        names += ["", "kpm"]
    node = helper.make_node("MultiHeadAttention", names, ["o"], domain="com.microsoft", num_heads=hq,
                            scale=dqk ** -0.5, unidirectional=int(causal))
    s = op_session(ort, helper, so, node, ins, [helper.make_tensor_value_info("o", et, [b, nq, hq * dv])])
    return lambda: unflat(np, s.run(None, feed)[0], hq)


def gqa_side(np, ort, onnx, helper, so, dims, q, k, v, m):
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
    et = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(ft))
    feed = {"q": flat(np, q), "k": flat(np, k), "v": flat(np, v),
            "pk": np.zeros((b, hkv, 0, dqk), ft), "pv": np.zeros((b, hkv, 0, dv), ft),
            "seqlens": np.full((b,), nk - 1, np.int32), "total": np.array(nk, np.int32)}
    types = {"seqlens": onnx.TensorProto.INT32, "total": onnx.TensorProto.INT32}
    ins = [helper.make_tensor_value_info(n, types.get(n, et), x.shape) for n, x in feed.items()]
    node = helper.make_node("GroupQueryAttention", list(feed), ["o", "present_k", "present_v"],
                            domain="com.microsoft", num_heads=hq, kv_num_heads=hkv, scale=dqk ** -0.5)
    outs = [helper.make_tensor_value_info("o", et, [b, nq, hq * dv]),
            helper.make_tensor_value_info("present_k", et, None), helper.make_tensor_value_info("present_v", et, None)]
    s = op_session(ort, helper, so, node, ins, outs)
    return lambda: unflat(np, s.run(["o"], feed)[0], hq)


def gqa_decode_side(np, ort, onnx, helper, so, dims, q, k, v, m):
    """One decoding step as a generation loop runs GroupQueryAttention: the
    KV cache is one buffer (B, Hkv, Nk, D) bound through IOBinding as both
    past and present (past_present_share_buffer), the step's key and value
    written into its last slot; seqlens_k = Nk - 1."""
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
    et = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(ft))
    feed = {"q": flat(np, q), "k": flat(np, k[:, :, -1:]), "v": flat(np, v[:, :, -1:]),
            "seqlens": np.full((b,), nk - 1, np.int32), "total": np.array(nk, np.int32)}
    pk = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(k))  # the cache: past and present
    pv = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(v))
    types = {"seqlens": onnx.TensorProto.INT32, "total": onnx.TensorProto.INT32}
    ins = [helper.make_tensor_value_info(n, types.get(n, et), x.shape) for n, x in feed.items()]
    ins[3:3] = [helper.make_tensor_value_info(n, et, [b, hkv, nk, d]) for n, d in (("pk", dqk), ("pv", dv))]
    names = ["q", "k", "v", "pk", "pv", "seqlens", "total"]
    node = helper.make_node("GroupQueryAttention", names, ["o", "present_k", "present_v"],
                            domain="com.microsoft", num_heads=hq, kv_num_heads=hkv, scale=dqk ** -0.5)
    outs = [helper.make_tensor_value_info("o", et, [b, nq, hq * dv]),
            helper.make_tensor_value_info("present_k", et, [b, hkv, nk, dqk]),
            helper.make_tensor_value_info("present_v", et, [b, hkv, nk, dv])]
    s = op_session(ort, helper, so, node, ins, outs)
    io = s.io_binding()
    for n, x in feed.items():
        io.bind_cpu_input(n, x)
    io.bind_ortvalue_input("pk", pk)
    io.bind_ortvalue_input("pv", pv)
    io.bind_output("o")  # first: get_outputs()[0]
    io.bind_ortvalue_output("present_k", pk)
    io.bind_ortvalue_output("present_v", pv)

    def run():
        s.run_with_iobinding(io)
        return unflat(np, io.get_outputs()[0].numpy(), hq)  # not the cache outputs: no copy of them
    return run


def attnopt_bf16_side(np, ort, onnx, helper, so, dims, q, k, v):
    """bf16 through ORT as a user runs it: numpy cannot hold bf16, so the
    uint16 bits are bound as BFLOAT16 OrtValues through IOBinding."""
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
    bf = onnx.TensorProto.BFLOAT16
    feed = {"q": q, "k": k, "v": v}
    ins = [helper.make_tensor_value_info(n, bf, x.shape) for n, x in feed.items()]
    node = helper.make_node("FlashAttention", list(feed), ["o"], domain="attnopt", scale=dqk ** -0.5,
                            causal=int(causal))
    s = op_session(ort, helper, so, node, ins, [helper.make_tensor_value_info("o", bf, [b, hq, nq, dv])])
    out = np.zeros((b, hq, nq, dv), np.uint16)
    io = s.io_binding()
    for n, x in feed.items():
        io.bind_ortvalue_input(n, ort.OrtValue.ortvalue_from_numpy_with_onnx_type(x, bf))
    io.bind_ortvalue_output("o", ort.OrtValue.ortvalue_from_numpy_with_onnx_type(out, bf))

    def run():
        s.run_with_iobinding(io)
        return out  # bf16 bits; as_float64 converts them outside the timing
    return run


def sdpa_side(torch, dims, q, k, v, m):
    b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    if ft == BF16:
        tq, tk, tv = (t.view(torch.bfloat16) for t in (torch.from_numpy(x.view("int16")) for x in (q, k, v)))
    tm = None
    if mask == "bool":
        tm = torch.from_numpy(m)
    elif mask in PAD:
        tm = torch.from_numpy(m.reshape(b, 1, 1, nk))
    F = torch.nn.functional

    def run():
        with torch.inference_mode():
            return F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, is_causal=causal, scale=dqk ** -0.5,
                                                  enable_gqa=hq != hkv)
    return run  # a tensor in the input's type; as_float64 converts it outside the timing


def as_float64(np, x, ft):
    """A side's output as float64, for the check only: the timed calls return
    their output as the runtime gives it (a torch tensor, bf16 bits), so no
    side pays for a conversion the others do not make."""
    if hasattr(x, "float"):  # torch
        x = x.float().numpy()
    elif ft == BF16:
        x = from_bf16(np, x)
    return x.astype(np.float64)


def timed(fn, inner, tick):
    t0 = tick()
    for _ in range(inner):
        fn()
    return (tick() - t0) / inner


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="libattnopt_ort.so")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES))
    ap.add_argument("--quick", action="store_true", help="the table's small sizes")
    ap.add_argument("--wall", action="store_true")
    ap.add_argument("--max-scores-gib", type=float, default=2.0, help="skip MHA above this score tensor size")
    a = ap.parse_args()
    os.environ["ATTNOPT_NUM_THREADS"] = str(a.threads)
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import helper

    torch.set_num_threads(a.threads)
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.register_custom_ops_library(os.path.abspath(a.lib))
    tick = time.perf_counter if a.wall else time.process_time
    print(f"onnxruntime {ort.__version__}, torch {torch.__version__}, threads {a.threads}, "
          f"{'wall' if a.wall else 'process CPU'} time, {a.rounds} rounds (order rotated){', quick sizes' if a.quick else ''}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| shape | attnopt min / median ms | MHA | GQA | SDPA | attnopt / fastest other (min) | (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in a.shape or list(SHAPES):
        dims, q, k, v, m = make_inputs(np, SHAPES[name], a.quick)
        b, hq, hkv, nq, nk, dqk, dv, mask, causal, ft = dims
        sides = {"attnopt": attnopt_side(np, ort, onnx, helper, so, dims, q, k, v, m)}
        if ft != BF16 and b * hq * nq * nk * 4 <= a.max_scores_gib * 2 ** 30:
            sides["MHA"] = mha_side(np, ort, onnx, helper, so, dims, q, k, v, m)
        if ft != BF16 and causal and dqk == dv and mask == "none" and nq == nk:
            sides["GQA"] = gqa_side(np, ort, onnx, helper, so, dims, q, k, v, m)
        if ft != BF16 and nq == 1 and dqk == dv and mask == "none":
            sides["GQA"] = gqa_decode_side(np, ort, onnx, helper, so, dims, q, k, v, m)
        sides["SDPA"] = sdpa_side(torch, dims, q, k, v, m)
        ref = as_float64(np, sides["attnopt"](), ft)
        inner = {}
        for s, fn in sides.items():
            out = as_float64(np, fn(), ft)
            err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
            if err > (2e-2 if ft in (np.float16, BF16) else 1e-4):
                print(f"{name}: {s} differs from attnopt by {err:.1e} (relative L2)", file=sys.stderr)
            t = timed(fn, 1, time.perf_counter)
            inner[s] = max(1, int(0.05 / max(t, 1e-6)))
        names = list(sides)
        times = {s: [] for s in names}
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for s in order:
                times[s].append(timed(sides[s], inner[s], tick))
        cell = lambda s: (f"{min(times[s]) * 1e3:.4g} / {statistics.median(times[s]) * 1e3:.4g}" if s in times else "n/a")
        others = [s for s in names if s != "attnopt"]
        best_min = min(min(times[s]) for s in others)
        best_med = min(statistics.median(times[s]) for s in others)
        print(f"| {name} | {cell('attnopt')} | {cell('MHA')} | {cell('GQA')} | {cell('SDPA')} | "
              f"{min(times['attnopt']) / best_min:.2f} | {statistics.median(times['attnopt']) / best_med:.2f} |",
              flush=True)
        del sides
    return 0


if __name__ == "__main__":
    sys.exit(main())
