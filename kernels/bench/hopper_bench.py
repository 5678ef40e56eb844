#!/usr/bin/env python3
"""Timings of attnopt.FlashAttention's CUDA kernels against PyTorch on one GPU.

One process, rounds interleaved: in each round every implementation runs
once per shape, in an order rotated from round to round; each sample is the
median of event-timed calls after a warm-up call. Per shape and
implementation: min and median over the rounds, TFLOP/s (4 N^2 d, halved for
causal) and the ratio to SDPA's flash backend. Implementations: attnopt's
tensor-core kernel (flash_mma.cu), its Hopper kernel (ATTNOPT_CUDA_HOPPER=1,
flash_wgmma.cu), PyTorch SDPA with the flash and the cuDNN backend, and
Triton through torch's flex_attention (--triton: compiled once per shape,
so on bf16 d 128 N 16384 only). The bf16 matmul rate joins the rounds as the ceiling. Also the
masked d 4 seed case and the tensor-core kernel's ring depths
(ATTNOPT_MMA_STAGES 1 and 2). Tables are printed last and written to --out.
Usage: hopper_bench.py --lib build/libattnopt.so [--rounds 5] [--out DIR] [--quick] [--triton] [--only TEXT]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnopt_ctypes as ac  # noqa: E402
import gpu_check as gc  # noqa: E402


def sample(fn, reps):
    fn()
    return statistics.median(gc.event_times(fn, reps))


def with_env(env, fn):
    """fn run with environment variables set for the duration of each call (read per launch)."""
    def run():
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            return fn()
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return run


def sdpa(backend, q, k, v, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]

    def fn():
        with sdpa_kernel(be):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return fn


def flex(q, k, v, causal):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    compiled = torch.compile(flex_attention)
    n = q.shape[2]
    bm = create_block_mask(lambda b, h, i, j: j <= i, 1, 1, n, n, device="cuda") if causal else None
    return lambda: compiled(q, k, v, block_mask=bm)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default="")
    ap.add_argument("--quick", action="store_true", help="N 4096 and 8192 only")
    ap.add_argument("--triton", action="store_true", help="add flex_attention (Triton) at bf16 d 128 N 16384")
    ap.add_argument("--only", default="", help="cases whose name contains TEXT")
    ap.add_argument("--tag", default="", help="suffix of the output files")
    args = ap.parse_args()
    gc.LIB = ac.load(args.lib)
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}", flush=True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(7)
    mm_a = torch.randn(8192, 8192, device="cuda", generator=gen, dtype=torch.bfloat16)
    mm_b = torch.randn(8192, 8192, device="cuda", generator=gen, dtype=torch.bfloat16)
    cases = []  # (name, flops, {impl: fn})
    cases.append(("bf16 matmul 8192^3 (ceiling)", 2 * 8192 ** 3, {"torch.matmul": lambda: torch.matmul(mm_a, mm_b)}))
    lengths = (4096, 8192) if args.quick else (4096, 8192, 16384)
    for dname, dt in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        for d in (64, 128):
            for n in lengths:
                for causal in (False, True):
                    q, k, v = (torch.randn(1, 16, n, d, device="cuda", generator=gen, dtype=dt) for _ in range(3))
                    out = torch.empty_like(q)
                    att = lambda q=q, k=k, v=v, out=out, c=causal: gc.attnopt_flash(q, k, v, d ** -0.5, None, c, out)
                    impls = {
                        "attnopt mma": with_env({"ATTNOPT_CUDA_HOPPER": "0"}, att),
                        "attnopt hopper": with_env({"ATTNOPT_CUDA_HOPPER": "1"}, att),
                        "SDPA flash": sdpa("flash", q, k, v, causal),
                        "SDPA cuDNN": sdpa("cudnn", q, k, v, causal),
                    }
                    if args.triton and dt == torch.bfloat16 and d == 128 and n == 16384:
                        impls["Triton (flex_attention)"] = flex(q, k, v, causal)
                    flops = 4.0 * 16 * n * n * d * (0.5 if causal else 1.0)
                    cases.append((f"{dname} H16 d{d} N{n}{' causal' if causal else ''}", flops, impls))
    n = 10000  # the masked d 4 seed case
    q, k, v = (torch.randn(1, 16, n, 4, device="cuda", generator=gen, dtype=torch.float16) for _ in range(3))
    mask = torch.rand(1, 1, n, n, device="cuda", generator=gen) < 0.9
    out = torch.empty_like(q)
    cases.append(("seed f16 H16 d4 bool N10000", 2.0 * 16 * n * n * 8,
                  {"attnopt mma": lambda: gc.attnopt_flash(q, k, v, 0.5, mask, False, out)}))
    q2, k2, v2 = (torch.randn(1, 16, 8192, 64, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(3))
    out2 = torch.empty_like(q2)
    cases.append(("bf16 H16 d64 N8192, mma ring depth", 4.0 * 16 * 8192 ** 2 * 64,
                  {f"stages {s}": with_env({"ATTNOPT_MMA_STAGES": str(s)},
                                           lambda: gc.attnopt_flash(q2, k2, v2, 0.125, None, False, out2))
                   for s in (1, 2)}))

    cases = [c for c in cases if args.only in c[0] or c[0].startswith("bf16 matmul")]
    samples = {(c[0], impl): [] for c in cases for impl in c[2]}
    failed = {}
    t0 = time.time()
    for r in range(args.rounds):
        for name, _, impls in cases:
            names = list(impls)
            names = names[r % len(names):] + names[:r % len(names)]  # rotate who goes first
            for impl in names:
                if (name, impl) in failed:
                    continue
                try:
                    samples[(name, impl)].append(sample(impls[impl], args.reps))
                except Exception as ex:  # unsupported backend or shape: say so once
                    torch.cuda.synchronize()
                    failed[(name, impl)] = (str(ex).strip().splitlines() or [type(ex).__name__])[0][:80]
        print(f"round {r + 1}/{args.rounds} done ({time.time() - t0:.0f}s)", flush=True)

    lines = ["| case | implementation | min ms | median ms | TFLOP/s (min) | / SDPA flash (min) | / SDPA flash (median) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    rows = []
    for name, flops, impls in cases:
        ref = samples.get((name, "SDPA flash"), [])
        for impl in impls:
            xs = samples[(name, impl)]
            if not xs:
                lines.append(f"| {name} | {impl} | n/a | | | | {failed.get((name, impl), '')} |")
                continue
            mn, md = min(xs), statistics.median(xs)
            r_min = f"{mn / min(ref):.2f}" if ref else ""
            r_med = f"{md / statistics.median(ref):.2f}" if ref else ""
            lines.append(f"| {name} | {impl} | {mn:.3f} | {md:.3f} | {flops / (mn * 1e-3) / 1e12:.0f} | {r_min} | {r_med} |")
            rows.append({"case": name, "impl": impl, "ms": xs, "flops": flops})
    table = "\n".join(lines)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"hopper_bench{args.tag}.json"), "w") as f:
            json.dump({"rows": rows, "failed": {f"{k[0]} / {k[1]}": v for k, v in failed.items()}}, f, indent=1)
        with open(os.path.join(args.out, f"hopper_bench{args.tag}.md"), "w") as f:
            f.write(table + "\n")
    print(f"\n{args.rounds} interleaved rounds, {args.reps} event-timed calls per sample ({time.time() - t0:.0f}s)\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
