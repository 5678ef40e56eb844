#!/usr/bin/env python3
"""A rewritten model (attnopt.FlashAttention on ORT's CPU provider) against the
original unfused graph, in one process: interleaved rounds alternating which
goes first, ratio of minima and of medians (rewritten / original). Process CPU
time by default (the machine is shared), wall time with --wall.
Single-threaded by default (ORT intra_op_num_threads=1, ATTNOPT_NUM_THREADS=1).

  attnopt rewrite testdata/examples/sagan_128x128.onnx -o /tmp/sagan.attnopt.onnx
  python3 kernels/bench/cpu_model_vs_original.py --lib build/libattnopt_ort.so \\
      testdata/examples/sagan_128x128.onnx /tmp/sagan.attnopt.onnx
  ... --one rewritten   (one side only, for /usr/bin/time -v peak memory)

A sample of a short model is a batch of runs (about 50 ms, or --inner N) and
counts the time per run; ORT's spinning threads are off (allow_spinning 0),
so CPU time counts work, not waiting.
"""
import argparse
import os
import statistics
import time

import ort_bench_common as common


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("original")
    ap.add_argument("rewritten")
    ap.add_argument("--lib", required=True, help="libattnopt_ort.so")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--one", choices=["original", "rewritten"])
    ap.add_argument("--wall", action="store_true")
    ap.add_argument("--inner", type=int, default=0, help="runs per sample (default: about 50 ms)")
    a = ap.parse_args()
    os.environ["ATTNOPT_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import onnxruntime as ort

    so = common.session_options(ort, a.lib, a.threads)
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    paths = {"original": a.original, "rewritten": a.rewritten}
    names = [a.one] if a.one else ["original", "rewritten"]
    sess = {k: ort.InferenceSession(paths[k], so, providers=["CPUExecutionProvider"]) for k in names}
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess[names[0]].get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    outs = {k: s.run(None, feeds)[0] for k, s in sess.items()}  # warm-up
    print(common.describe(ort, a.threads, a.wall))
    if len(outs) == 2:
        o, r = outs["original"], outs["rewritten"]
        print(f"max |rewritten - original| {np.max(np.abs(r - o)):.2e} (max |original| {np.max(np.abs(o)):.2e})")
    inner = {}
    for k, s in sess.items():
        t0 = time.perf_counter()
        s.run(None, feeds)
        inner[k] = a.inner or max(1, int(0.05 / max(time.perf_counter() - t0, 1e-6)))

    def batch(s, n):
        for _ in range(n):
            s.run(None, feeds)
    runs = {k: (lambda s=s, n=inner[k]: batch(s, n)) for k, s in sess.items()}
    times = common.interleaved(runs, a.rounds, common.clock(a.wall))
    times = {k: [t / inner[k] for t in ts] for k, ts in times.items()}
    for k in names:
        print(f"{k}: min {min(times[k]) * 1e3:.4g} ms, median {statistics.median(times[k]) * 1e3:.4g} ms per run"
              f" ({inner[k]} runs per sample)")
    if len(names) == 2:
        t_o, t_r = times["original"], times["rewritten"]
        print(f"rewritten / original: ratio of minima {min(t_r) / min(t_o):.2f}, "
              f"of medians {statistics.median(t_r) / statistics.median(t_o):.2f}")


if __name__ == "__main__":
    main()
