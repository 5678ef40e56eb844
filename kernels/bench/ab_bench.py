#!/usr/bin/env python3
"""A/B timing of two builds of libattnopt (CUDA) on the same inputs.

Rounds interleave the two libraries and alternate which goes first; each
sample is the median of cudaEvent-timed calls. Prints min and median per
side and the ratio B/A of minima and of medians, per shape, plus PyTorch
SDPA (flash backend where it applies, else efficient) as the outside anchor.
Usage: ab_bench.py --a old.so --b new.so [--rounds 5]
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnopt_ctypes as ac  # noqa: E402
import gpu_check as gc  # noqa: E402

SHAPES = [  # name, dtype, H, N, Dqk, Dv, causal, bool mask
    ("bf16 H16 d64 N8192", torch.bfloat16, 16, 8192, 64, 64, False, False),
    ("f16 H16 d64 N16384", torch.float16, 16, 16384, 64, 64, False, False),
    ("bf16 H16 d128 N8192", torch.bfloat16, 16, 8192, 128, 128, False, False),
    ("bf16 H16 d64 N8192 causal", torch.bfloat16, 16, 8192, 64, 64, True, False),
    ("bf16 H16 d128 N8192 causal", torch.bfloat16, 16, 8192, 128, 128, True, False),
    ("bf16 SAGAN 8/64 N65536", torch.bfloat16, 1, 65536, 8, 64, False, False),
    ("f16 seed H16 d4 bool N10000", torch.float16, 16, 10000, 4, 4, False, True),
]


def sample(fn, reps=10):
    """Median ms of reps event-timed calls after one warm-up call."""
    fn()
    return statistics.median(gc.event_times(fn, reps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    libs = {"A": ac.load(args.a), "B": ac.load(args.b)}
    gen = torch.Generator(device="cuda")
    gen.manual_seed(3)
    lines = ["| shape | A min / median ms | B min / median ms | B/A (min) | B/A (median) | SDPA ms | B TFLOP/s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, dt, h, n, dqk, dv, causal, use_mask in SHAPES:
        q = torch.randn(1, h, n, dqk, device="cuda", generator=gen, dtype=dt)
        k = torch.randn(1, h, n, dqk, device="cuda", generator=gen, dtype=dt)
        v = torch.randn(1, h, n, dv, device="cuda", generator=gen, dtype=dt)
        mask = torch.rand(1, 1, n, n, device="cuda", generator=gen) < 0.9 if use_mask else None
        out = torch.empty(1, h, n, dv, device="cuda", dtype=dt)
        scale = dqk ** -0.5

        def run(lib):
            gc.LIB = lib
            return lambda: gc.attnopt_flash(q, k, v, scale, mask, causal, out)
        res = {"A": [], "B": []}
        for r in range(args.rounds):
            for side in (("A", "B") if r % 2 == 0 else ("B", "A")):
                res[side].append(sample(run(libs[side])))
        be = "flash" if dqk == dv and dqk % 8 == 0 and mask is None else "efficient"
        try:
            sd = sample(gc.sdpa_fn(be, q, k, v, scale, mask, causal))
            sd_s = f"{sd:.3f} ({be})"
        except Exception:
            sd_s = "n/a"
        a_min, b_min = min(res["A"]), min(res["B"])
        a_med, b_med = statistics.median(res["A"]), statistics.median(res["B"])
        flops = 2.0 * h * n * n * (dqk + dv) * (0.5 if causal else 1.0)
        lines.append(f"| {name} | {a_min:.3f} / {a_med:.3f} | {b_min:.3f} / {b_med:.3f} | {b_min / a_min:.2f} | "
                     f"{b_med / a_med:.2f} | {sd_s} | {flops / (b_min * 1e-3) / 1e12:.1f} |")
        print(lines[-1], flush=True)
        del q, k, v, mask, out
        torch.cuda.empty_cache()
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
