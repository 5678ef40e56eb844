#!/usr/bin/env python3
"""End to end on ONNX Runtime CPU: a model as exported, its `attnopt rewrite`
(the default target, attnopt.FlashAttention from kernels/) and its
`attnopt rewrite --target ort` (ORT's own com.microsoft ops; --stock gqa:
GroupQueryAttention instead), timed in one
process and their peak memory each in a process of its own.

  python bench/e2e.py --attnopt ./attnopt --lib kernels/build/cpu/libattnopt_ort.so \\
      [--threads 1] [--rounds 5] [--stock ort|gqa|onnx] MODEL.onnx ...

Per model: both rewrites are written beside each other in a temporary
folder; every side's session runs once per round, the order rotated by one
side per round (whichever goes first pays for heap growth), each sample a
batch of runs of about 0.3 s; times are process CPU time (the machine is
shared) per run, min and median, and each rewrite's time over the
original's. ORT's thread pool does not spin (allow_spinning 0), so CPU time
counts work. Peak RSS: `/usr/bin/time -v` of this script with --one SIDE
(load, one warm-up run, one timed run), once per side per round.
Prints one Markdown row per model.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SIDES = ("original", "attnopt", "ort")


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "bench"))
import ort_bench_common as common  # noqa: E402


def session(ort, path, lib, threads):
    so = common.session_options(ort, lib, threads)
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def feeds_for(np, sess):
    """Inputs for a session: token ids in [0, 100), masks of ones, floats N(0, 1)."""
    rng = np.random.default_rng(0)
    out = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if "int64" in i.type:
            out[i.name] = np.ones(shape, np.int64) if "mask" in i.name else rng.integers(0, 100, shape)
        else:
            out[i.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def one(a):
    """--one: load, warm up, run once (the child process whose peak RSS is read)."""
    import numpy as np
    import onnxruntime as ort
    s = session(ort, a.models[0], a.lib, a.threads)
    f = feeds_for(np, s)
    s.run(None, f)
    s.run(None, f)
    return 0


def peak_kib(a, path):
    cmd = ["/usr/bin/time", "-v", sys.executable, os.path.abspath(__file__), "--one", "--lib", a.lib,
           "--threads", str(a.threads), path]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "ATTNOPT_NUM_THREADS": str(a.threads)})
    if r.returncode != 0:
        raise SystemExit(f"e2e: {path}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'}")
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))


def rewrite(a, model, out, target):
    cmd = [a.attnopt, "rewrite", model, "-o", out] + (["--target", target] if target else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"e2e: attnopt rewrite {model} (target {target or 'default'}) exited {r.returncode}: "
                         f"{r.stderr.strip()}")
    fused = re.search(r"(\d+) of (\d+)", r.stdout + r.stderr)
    return fused.group(0) if fused else "?"


def measure(a, model, tmp):
    import numpy as np
    import onnxruntime as ort
    paths = {"original": model, "attnopt": os.path.join(tmp, "attnopt.onnx"), "ort": os.path.join(tmp, "ort.onnx")}
    fused = rewrite(a, model, paths["attnopt"], "")
    rewrite(a, model, paths["ort"], a.stock)
    sess = {k: session(ort, p, a.lib, a.threads) for k, p in paths.items()}
    feeds = feeds_for(np, sess["original"])
    ref = sess["original"].run(None, feeds)[0]
    err = {}
    inner = {}
    for k, s in sess.items():
        t0 = time.perf_counter()
        out = s.run(None, feeds)[0]
        inner[k] = max(1, int(0.3 / max(time.perf_counter() - t0, 1e-6)))
        err[k] = float(np.max(np.abs(out - ref)))
    times = {k: [] for k in SIDES}
    for r in range(a.rounds):
        order = SIDES[r % 3:] + SIDES[:r % 3]
        for k in order:
            t0 = time.process_time()
            for _ in range(inner[k]):
                sess[k].run(None, feeds)
            times[k].append((time.process_time() - t0) / inner[k])
    del sess
    rss = {k: [] for k in SIDES}
    for r in range(a.rss_rounds):
        for k in SIDES[r % 3:] + SIDES[:r % 3]:
            rss[k].append(peak_kib(a, paths[k]))
    return fused, times, rss, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--attnopt", default="./attnopt")
    ap.add_argument("--lib", required=True, help="libattnopt_ort.so")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rss-rounds", type=int, default=3)
    ap.add_argument("--stock", default="ort", choices=("ort", "gqa", "onnx"),
                    help="the stock-op target of the third side (default ort: MultiHeadAttention)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    os.environ["ATTNOPT_NUM_THREADS"] = str(a.threads)
    if a.one:
        return one(a)
    import onnxruntime as ort
    print(f"onnxruntime {ort.__version__}, {a.threads} thread(s), process CPU time per run, {a.rounds} rounds "
          f"(order rotated); peak RSS of a process loading and running one side, {a.rss_rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    st = a.stock
    print(f"| model | fused | original ms (min / median) | attnopt | `--target {st}` | attnopt / original "
          f"(min / median) | {st} / original | peak RSS MiB original / attnopt / {st} (median) | "
          f"max abs diff attnopt, {st} |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for model in a.models:
        with tempfile.TemporaryDirectory() as tmp:
            fused, t, rss, err = measure(a, model, tmp)
        ms = lambda k: f"{min(t[k]) * 1e3:.4g} / {statistics.median(t[k]) * 1e3:.4g}"
        ratio = lambda k: (f"{min(t[k]) / min(t['original']):.2f} / "
                           f"{statistics.median(t[k]) / statistics.median(t['original']):.2f}")
        mib = " / ".join(f"{statistics.median(rss[k]) / 1024:.0f}" for k in SIDES)
        print(f"| {os.path.basename(model)} | {fused} | {ms('original')} | {ms('attnopt')} | {ms('ort')} | "
              f"{ratio('attnopt')} | {ratio('ort')} | {mib} | {err['attnopt']:.1e}, {err['ort']:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
