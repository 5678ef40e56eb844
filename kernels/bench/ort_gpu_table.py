#!/usr/bin/env python3
"""ONNX Runtime's CUDA EP on the lent GPU, for lease.sh call 2.

  epcheck           ORT's own CUDA kernels first (is the trimmed fatbin
                    accepted?): one-node ONNX Attention-23 models on the CUDA
                    EP against NumPy in float64 (flash, memory-efficient and
                    unfused paths by the conditions in passes/lower/cuda.go).
                    With --cpu, the same models on the CPU EP (a rehearsal).
  table MODELS_DIR  each model of MODELS_DIR/models.txt as original,
                    --target ort and --target attnopt, one fresh process
                    each: median time of 5 runs after 2 warm-ups (one cold
                    run when it takes over 5 s; inputs and
                    outputs bound on the device, I/O binding), peak device
                    memory over the process's baseline (NVML, sampled every
                    2 ms), and the output's relative L2 error against the
                    original on the same EP. A Markdown table is printed last.

Needs numpy and onnxruntime(-gpu); onnx for epcheck; nvidia-ml-py (pynvml)
for memory on a GPU. Inputs are random (seeded), bool inputs 80 % true.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time

import numpy as np


def ref_attention(q, k, v, mask, scale):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s -= s.max(-1, keepdims=True)
    p = np.exp(s)
    return np.einsum("bhqk,bhkd->bhqd", p / p.sum(-1, keepdims=True), v)


def attention23(dt, shape, d, masked):
    from onnx import TensorProto, helper
    elem = {np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT}[dt]
    b, h, n = shape
    ins = [helper.make_tensor_value_info(x, elem, [b, h, n, d]) for x in "QKV"]
    names = ["Q", "K", "V"]
    if masked:
        ins.append(helper.make_tensor_value_info("M", TensorProto.BOOL, [1, 1, n, n]))
        names.append("M")
    node = helper.make_node("Attention", names, ["O"], scale=1.0 / math.sqrt(d))
    g = helper.make_graph([node], "attention23", ins, [helper.make_tensor_value_info("O", elem, [b, h, n, d])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    return m.SerializeToString()


def load_ort():
    """onnxruntime, with the CUDA provider's libraries (cuBLAS, cuDNN, ...)
    loaded from the nvidia-* wheels, as onnxruntime-gpu documents."""
    import onnxruntime as ort
    try:
        ort.preload_dlls()
    except Exception as e:  # older releases, or no nvidia-* wheels (the rehearsal)
        print(f"(preload_dlls: {e})", file=sys.stderr)
    return ort


def epcheck(cpu):
    ort = load_ort()
    print(f"onnxruntime {ort.__version__} from {os.path.dirname(ort.__file__)}; providers {ort.get_available_providers()}")
    providers = ["CPUExecutionProvider"] if cpu else ["CUDAExecutionProvider"]
    rng = np.random.default_rng(1)
    failed = 0
    # (dtype, d, masked, ORT's CUDA path by passes/lower/cuda.go)
    for dt, d, masked, path in [(np.float16, 64, False, "flash"), (np.float16, 64, True, "memory-efficient"),
                                (np.float16, 4, True, "unfused"), (np.float32, 32, False, "memory-efficient")]:
        b, h, n = 1, 8, 1024
        q, k, v = (rng.standard_normal((b, h, n, d)).astype(dt) for _ in range(3))
        feed = {"Q": q, "K": k, "V": v}
        mask = None
        if masked:
            mask = rng.random((1, 1, n, n)) < 0.8
            feed["M"] = mask
        so = ort.SessionOptions()
        so.enable_profiling = True
        so.profile_file_prefix = "/tmp/ort_epcheck"
        sess = ort.InferenceSession(attention23(dt, (b, h, n), d, masked), so, providers=providers)
        out = sess.run(None, feed)[0].astype(np.float64)
        prof = json.load(open(sess.end_profiling()))
        eps = sorted({e["args"].get("provider") for e in prof if e.get("cat") == "Node" and "provider" in e.get("args", {})})
        ref = ref_attention(q, k, v, mask, 1.0 / math.sqrt(d))
        err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref)) if np.isfinite(out).all() else math.inf
        tol = 2e-3 if dt == np.float16 else 1e-4
        ok = err <= tol and eps == providers
        failed += not ok
        print(f"Attention-23 {np.dtype(dt).name} d {d} mask {masked} (CUDA path: {path}): rel err {err:.2e} "
              f"(tol {tol:g}), ran on {eps} -> {'ok' if ok else 'FAILED'}")
    return 1 if failed else 0


class Peak:
    """Peak device memory used (NVML), sampled in a thread; MiB."""

    def __init__(self):
        self.peak = self.base = 0
        self.h = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.base = self.used()
        except Exception as e:  # no GPU: the rehearsal
            print(f"(no NVML: {e})", file=sys.stderr)

    def used(self):
        return self.nv.nvmlDeviceGetMemoryInfo(self.h).used / 2**20 if self.h else 0.0

    def __enter__(self):
        self.stop = False
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()
        return self

    def loop(self):
        while not self.stop:
            self.peak = max(self.peak, self.used())
            time.sleep(0.002)

    def __exit__(self, *a):
        self.stop = True
        self.t.join()


def feeds(sess, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if i.type == "tensor(bool)":
            out[i.name] = rng.random(shape) < 0.8
        elif "int64" in i.type:
            out[i.name] = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        else:
            dt = {"tensor(float16)": np.float16, "tensor(double)": np.float64}.get(i.type, np.float32)
            out[i.name] = rng.standard_normal(shape).astype(dt)
    return out


def one(model, lib, ep, out_npy):
    """Child: run one model once per timing round; prints a JSON line."""
    ort = load_ort()
    peak = Peak()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if lib:
        so.register_custom_ops_library(lib)
    # kSameAsRequested: the arena grows by what each allocation asks, not by
    # doubling, so the peak device memory is the model's, not the arena's.
    cuda = ("CUDAExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})
    provs = [cuda, "CPUExecutionProvider"] if ep == "cuda" else ["CPUExecutionProvider"]
    with peak:
        sess = ort.InferenceSession(model, so, providers=provs)
        if ep == "cuda" and sess.get_providers()[0] != "CUDAExecutionProvider":
            # ORT falls back to the CPU with only a warning: a CPU row would pass as a GPU one.
            raise SystemExit(f"{model}: the CUDA EP did not load (providers {sess.get_providers()})")
        x = feeds(sess, 7)
        dev = "cuda" if ep == "cuda" else "cpu"
        bind = sess.io_binding()
        for k, v in x.items():
            bind.bind_ortvalue_input(k, ort.OrtValue.ortvalue_from_numpy(v, dev, 0))
        name = sess.get_outputs()[0].name
        bind.bind_output(name, dev)
        times = []
        for r in range(7):
            t0 = time.perf_counter()
            sess.run_with_iobinding(bind)
            bind.synchronize_outputs()
            times.append(time.perf_counter() - t0)
            if r == 0 and times[0] > 5:  # a CPA3D-sized run: timed once, cold
                break
        y = bind.copy_outputs_to_cpu()[0]
    timed = times[2:] or times
    np.save(out_npy, y)
    print(json.dumps({"ms": 1e3 * float(np.median(timed)), "ms_min": 1e3 * min(timed), "runs": len(timed),
                      "peak_mib": peak.peak - peak.base if peak.h else None, "finite": bool(np.isfinite(y).all())}))
    return 0


def table(models_dir, lib, ep, limit):
    rows = []
    for line in open(os.path.join(models_dir, "models.txt")):
        if not line.strip() or line.startswith("#"):
            continue
        name, variants, note = line.rstrip("\n").split("\t")
        ref = None
        for var in variants.split(","):
            model = os.path.join(models_dir, f"{name}.{var}.onnx")
            npy = f"/tmp/ort_table_{name}_{var}_{ep}.npy"
            cmd = [sys.executable, __file__, "one", model, "--ep", ep, "--out", npy] + (["--lib", lib] if var == "attnopt" else [])
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
                res = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr.strip().splitlines()[-1:] or ["?"]}
            except subprocess.TimeoutExpired:
                res = {"error": [f"over {limit} s"]}
            if "error" not in res:
                y = np.load(npy).astype(np.float64)
                if var == "orig":
                    ref = y
                elif ref is not None and ref.shape == y.shape:
                    res["err"] = float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-30))
            rows.append((name, var, note, res))
            print(json.dumps({"model": name, "variant": var, "ep": ep, **res}), flush=True)
    print(f"\n| model | variant | EP | median ms (min) | peak device MiB | rel. L2 vs original |")
    print("|---|---|---|---:|---:|---:|")
    for name, var, note, r in rows:
        if "error" in r:
            print(f"| {name} ({note}) | {var} | {ep} | failed: {r['error'][0][:80]} | | |")
            continue
        pk = "-" if r.get("peak_mib") is None else f"{r['peak_mib']:.0f}"
        err = f"{r['err']:.1e}" if "err" in r else "-"
        runs = "" if r.get("runs", 5) > 1 else ", 1 cold run"
        print(f"| {name} ({note}) | {var} | {ep} | {r['ms']:.2f} ({r['ms_min']:.2f}{runs}) | {pk} | {err} |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["epcheck", "table", "one"])
    ap.add_argument("path", nargs="?")
    ap.add_argument("--cpu", action="store_true", help="epcheck on the CPU EP (rehearsal)")
    ap.add_argument("--lib", default="")
    ap.add_argument("--ep", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--out", default="/tmp/ort_one.npy")
    ap.add_argument("--limit", type=int, default=120, help="seconds per model run")
    a = ap.parse_args()
    if a.cmd == "epcheck":
        return epcheck(a.cpu)
    if a.cmd == "one":
        return one(a.path, a.lib, a.ep, a.out)
    return table(a.path, a.lib, a.ep, a.limit)


if __name__ == "__main__":
    sys.exit(main())
