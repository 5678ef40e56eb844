#!/usr/bin/env python3
"""Correctness check and benchmark of the attnopt CUDA kernels on one GPU.

Drives libattnopt through its C ABI (attnopt_ctypes.py) on PyTorch tensors:
  1. correctness against a float64 reference over dtypes x head dims x
     lengths x masks x (Dqk = Dv, Dqk != Dv) x (MHA, GQA), both kernel paths
     (tensor cores and SIMT) for f16/bf16, plus WindowAttention 1D/2D/3D with
     shift; outputs are poisoned with NaN before every run;
  2. benchmarks (median of cudaEvent-timed runs, TFLOP/s, extra peak memory)
     against torch SDPA with each backend forced and a naive
     matmul-softmax-matmul, the seed shapes of docs/design.md §1, and the bf16
     matmul rate as a ceiling; the Markdown table is printed last.
Exit status 1 when any correctness case fails.
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnopt_ctypes as ac  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
CODE = {torch.float32: ac.F32, torch.float16: ac.F16, torch.bfloat16: ac.BF16}
MASK_CODE = {torch.bool: ac.MASK_BOOL, torch.float32: ac.MASK_F32, torch.float16: ac.MASK_F16,
             torch.bfloat16: ac.MASK_BF16}
TOL = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1e-2}
HEAD_DIMS = (4, 8, 16, 32, 64, 128, 256)
LENGTHS = (1, 17, 128, 1000, 4096)
MASKS = ("none", "bool", "additive", "causal")
# Dv used for the Dqk != Dv variant: SAGAN's 8 -> 64, and dims that are not multiples of 8.
DV_ALT = {4: 12, 8: 64, 16: 40, 32: 72, 64: 20, 128: 200, 256: 96}
DEV = "cuda"

LIB = None


def set_path(path):
    """Kernel choice for the next calls: 'auto' (the library's default: on sm_90 the wgmma
    kernel where it measured ahead, else tensor cores when possible), 'simt', 'mma'
    (ATTNOPT_CUDA_HOPPER=0: never the wgmma kernel) or 'hopper' (ATTNOPT_CUDA_HOPPER=1:
    the sm_90a wgmma kernel wherever it applies)."""
    if path == "simt":
        os.environ["ATTNOPT_CUDA_PATH"] = "simt"
    else:
        os.environ.pop("ATTNOPT_CUDA_PATH", None)
    if path in ("hopper", "mma"):
        os.environ["ATTNOPT_CUDA_HOPPER"] = "1" if path == "hopper" else "0"
    else:
        os.environ.pop("ATTNOPT_CUDA_HOPPER", None)


PATHS = ("auto", "simt")  # CUDA kernel paths to check (--paths)


def paths_for(dtype):
    """Kernel paths to check: the CPU, or CUDA auto (+ SIMT, for f16/bf16).

    For f32, auto is the SIMT kernel, so it runs under either name once."""
    if DEV == "cpu":
        return ("cpu",)
    if dtype == torch.float32:
        return PATHS[:1]
    return PATHS


def sync():
    if DEV != "cpu":
        torch.cuda.synchronize()


def strides4(t):
    s = t.stride()
    return (s[0], s[1], s[2], s[3]) if t.dim() == 4 else (s[0], 0, s[1], s[2])


def stream_ptr():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def check_rc(rc, what):
    if rc != ac.OK:
        raise RuntimeError(f"{what}: {LIB.attnopt_status_string(rc).decode()} ({rc})")


def attnopt_flash(q, k, v, scale, mask=None, causal=False, out=None, sliding=0):
    rank3 = q.dim() == 3
    b, nq, dqk = q.shape[0], q.shape[-2], q.shape[-1]
    hq, hkv = (1, 1) if rank3 else (q.shape[1], k.shape[1])
    nk, dv = k.shape[-2], v.shape[-1]
    if out is None:
        out = torch.full(tuple(q.shape[:-1]) + (dv,), float("nan"), dtype=q.dtype, device=q.device)
    mtype, mptr, mstride = ac.MASK_NONE, None, (0, 0, 0, 0)
    if mask is not None:
        mtype, mptr = MASK_CODE[mask.dtype], mask.data_ptr()
        mstride = ac.bcast_strides(tuple(mask.shape), mask.stride())
    p = ac.flash_params(CODE[q.dtype], (b, hq, hkv, nq, nk, dqk, dv), (q.data_ptr(), strides4(q)),
                        (k.data_ptr(), strides4(k)), (v.data_ptr(), strides4(v)), out.data_ptr(), strides4(out),
                        scale, causal, mptr, mtype, mstride)
    p.window = sliding
    if DEV == "cpu":
        check_rc(LIB.attnopt_cpu_flash_attention_fwd(ctypes.byref(p)), "flash")
    else:
        check_rc(LIB.attnopt_cuda_flash_attention_fwd(ctypes.byref(p), stream_ptr()), "flash")
    return out


def attnopt_window(q, k, v, scale, grid, window, shift, out=None):
    b, hq, n, dqk = q.shape
    hkv, dv = k.shape[1], v.shape[-1]
    if out is None:
        out = torch.full((b, hq, n, dv), float("nan"), dtype=q.dtype, device=q.device)
    p = ac.window_params(CODE[q.dtype], (b, hq, hkv, n, dqk, dv), (q.data_ptr(), strides4(q)),
                         (k.data_ptr(), strides4(k)), (v.data_ptr(), strides4(v)), out.data_ptr(), strides4(out),
                         grid, window, shift, scale)
    if DEV == "cpu":
        check_rc(LIB.attnopt_cpu_window_attention_fwd(ctypes.byref(p)), "window")
    else:
        check_rc(LIB.attnopt_cuda_window_attention_fwd(ctypes.byref(p), stream_ptr()), "window")
    return out


def reference(q, k, v, scale, mask=None, causal=False, chunk_elems=1 << 27, sliding=0):
    """float64 softmax(Q K^T scale + mask) V; rows without keys give zeros; sliding > 0
    (with causal) keeps only keys j > i + Nk - Nq - sliding."""
    squeeze = q.dim() == 3
    if squeeze:
        q, k, v = q[:, None], k[:, None], v[:, None]
    b, hq, nq, _ = q.shape
    hkv, nk = k.shape[1], k.shape[2]
    kd = k.double().repeat_interleave(hq // hkv, 1)
    vd = v.double().repeat_interleave(hq // hkv, 1)
    qd = q.double()
    m4 = None
    if mask is not None:
        m4 = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape)).expand(b, hq, nq, nk)
    out = torch.empty(b, hq, nq, v.shape[-1], dtype=torch.float64, device=q.device)
    rows = max(1, chunk_elems // max(1, b * hq * nk))
    for i0 in range(0, nq, rows):
        i1 = min(nq, i0 + rows)
        s = torch.matmul(qd[:, :, i0:i1], kd.transpose(-1, -2)) * scale
        if m4 is not None:
            mm = m4[:, :, i0:i1]
            s = s.masked_fill(~mm, float("-inf")) if mm.dtype == torch.bool else s + mm.double()
        if causal:
            i = torch.arange(i0, i1, device=q.device)[:, None]
            j = torch.arange(nk, device=q.device)[None, :]
            s = s.masked_fill(j > i + (nk - nq), float("-inf"))
            if sliding > 0:
                s = s.masked_fill(j <= i + (nk - nq) - sliding, float("-inf"))
        mx = s.amax(-1, keepdim=True)
        mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
        p = torch.exp(s - mx)
        den = p.sum(-1, keepdim=True)
        out[:, :, i0:i1] = torch.matmul(p, vd) / torch.where(den > 0, den, torch.ones_like(den))
    return out[:, 0] if squeeze else out


def rel_err(out, ref):
    o = out.double()
    if not torch.isfinite(o).all():
        return math.inf
    den = ref.norm().item()
    num = (o - ref).norm().item()
    return num / den if den > 0 else num


def window_mask(grid, window, shift):
    axes = [torch.arange(g, device=DEV) for g in grid]
    coords = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(grid))
    ids = torch.stack([torch.remainder(coords[:, a] - shift[a], grid[a]) // window[a] for a in range(len(grid))], -1)
    return (ids[:, None, :] == ids[None, :, :]).all(-1)


def make_mask(kind, b, hq, nq, nk, dtype, gen):
    if kind == "bool":  # (1,1,Nq,Nk), every 7th row fully masked
        m = torch.rand(1, 1, nq, nk, device=DEV, generator=gen) < 0.8
        m[:, :, 3::7, :] = False
        return m
    if kind == "additive":  # (B,1,1,Nk) in the I/O dtype, some keys at -inf
        m = torch.rand(b, 1, 1, nk, device=DEV, generator=gen) * -3.0
        m[torch.rand(b, 1, 1, nk, device=DEV, generator=gen) < 0.1] = float("-inf")
        return m.to(dtype)
    return None


class Results:
    def __init__(self):
        self.rows = []
        self.failures = 0

    def add(self, name, dtype, path, err, tol):
        ok = err <= tol
        self.failures += not ok
        self.rows.append({"case": name, "dtype": str(dtype).replace("torch.", ""), "path": path, "err": err,
                          "tol": tol, "ok": ok})
        if not ok:
            print(f"FAIL {name} {dtype} [{path}] rel err {err:.3e} > {tol:g}", flush=True)


def flash_case(res, name, q, k, v, scale, mask=None, causal=False, layout=None, sliding=0):
    ref = reference(q, k, v, scale, mask, causal, sliding=sliding)
    for path in paths_for(q.dtype):
        set_path(path)
        try:
            out = attnopt_flash(q, k, v, scale, mask, causal, sliding=sliding)
            sync()
            err = rel_err(out, ref)
        except RuntimeError as e:
            print(f"ERROR {name}: {e}", flush=True)
            err = math.inf
        res.add(name, q.dtype, path, err, TOL[q.dtype])
    set_path("auto")


def correctness(res, quick):
    gen = torch.Generator(device=DEV)
    gen.manual_seed(0)
    lengths = (1, 17, 128, 1000) if quick else LENGTHS
    t0 = time.time()
    for dname, dt in DTYPES.items():
        for di, d in enumerate(HEAD_DIMS):
            for ni, n in enumerate(lengths):
                for mi, mk in enumerate(MASKS):
                    variant = (di + ni + mi) % 4  # cycles MHA/GQA x Dqk==Dv/Dqk!=Dv over the matrix
                    gqa, neq = variant & 1, variant & 2
                    b, hq = (2 if n <= 128 else 1), 4
                    hkv = 2 if gqa else 4
                    dv = DV_ALT[d] if neq else d
                    q = torch.randn(b, hq, n, d, device=DEV, generator=gen).to(dt)
                    k = torch.randn(b, hkv, n, d, device=DEV, generator=gen).to(dt)
                    v = torch.randn(b, hkv, n, dv, device=DEV, generator=gen).to(dt)
                    mask = make_mask(mk, b, hq, n, n, dt, gen)
                    name = f"flash d={d}/{dv} N={n} {mk} {'GQA' if gqa else 'MHA'}"
                    flash_case(res, name, q, k, v, 1.0 / math.sqrt(d), mask, mk == "causal")
        print(f"  {dname}: matrix done ({time.time() - t0:.1f}s)", flush=True)

    # Head dims that are not multiples of 8, strided layouts, rank 3, broadcast masks.
    for dt in DTYPES.values():
        for d in (5, 12, 20, 33, 72, 130, 250):
            q, k, v = (torch.randn(1, 2, 300, d, device=DEV, generator=gen).to(dt) for _ in range(3))
            flash_case(res, f"flash odd d={d} N=300 bool", q, k, v, d ** -0.5,
                       make_mask("bool", 1, 2, 300, 300, dt, gen))
        base = [torch.randn(2, 333, 4, 64, device=DEV, generator=gen).to(dt) for _ in range(3)]
        q, k, v = (t.transpose(1, 2) for t in base)  # (B,H,N,D) views of (B,N,H,D) memory
        flash_case(res, "flash strided (B,N,H,D) memory, causal", q, k, v, 0.125, causal=True)
        q = torch.randn(3, 100, 16, device=DEV, generator=gen).to(dt)
        k = torch.randn(3, 300, 16, device=DEV, generator=gen).to(dt)
        v = torch.randn(3, 300, 16, device=DEV, generator=gen).to(dt)
        flash_case(res, "flash rank 3, causal Nq 100 < Nk 300", q, k, v, 0.25, causal=True)
        q = torch.randn(1, 2, 300, 32, device=DEV, generator=gen).to(dt)
        k = torch.randn(1, 2, 100, 32, device=DEV, generator=gen).to(dt)
        v = torch.randn(1, 2, 100, 32, device=DEV, generator=gen).to(dt)
        flash_case(res, "flash causal Nq 300 > Nk 100 (empty rows)", q, k, v, 0.2, causal=True)
        q, k, v = (torch.randn(2, 3, 200, 32, device=DEV, generator=gen).to(dt) for _ in range(3))
        m = torch.randn(1, 3, 1, 200, device=DEV, generator=gen).float()
        flash_case(res, "flash f32 mask (1,H,1,Nk)", q, k, v, 0.2, m)
        m2 = torch.rand(200, 200, device=DEV, generator=gen) < 0.5
        flash_case(res, "flash bool mask rank 2 (Nq,Nk) + causal", q, k, v, 0.2, m2, True)
        q = torch.randn(1, 1, 4096, 8, device=DEV, generator=gen).to(dt)
        k = torch.randn(1, 1, 4096, 8, device=DEV, generator=gen).to(dt)
        v = torch.randn(1, 1, 4096, 64, device=DEV, generator=gen).to(dt)
        flash_case(res, "flash SAGAN d=8/64 N=4096 scale 1", q, k, v, 1.0)
        # Sliding windows (Mistral's band, causal): tensor cores skip the tiles outside it.
        for d, n, nk, w in ((64, 2000, 2000, 256), (128, 1000, 1500, 100), (16, 700, 700, 64), (32, 300, 300, 1)):
            q = torch.randn(1, 4, n, d, device=DEV, generator=gen).to(dt)
            k = torch.randn(1, 2, nk, d, device=DEV, generator=gen).to(dt)
            v = torch.randn(1, 2, nk, d, device=DEV, generator=gen).to(dt)
            flash_case(res, f"flash sliding window {w} d={d} Nq={n} Nk={nk} GQA", q, k, v, d ** -0.5, causal=True,
                       sliding=w)
        q = torch.randn(1, 2, 1000, 4, device=DEV, generator=gen).to(dt)
        k, v = (torch.randn(1, 2, 1000, 4, device=DEV, generator=gen).to(dt) for _ in range(2))
        blocks = (torch.arange(1000, device=DEV)[:, None] // 32 + torch.arange(1000, device=DEV)[None, :] // 64) % 3
        flash_case(res, "flash d=4 bool mask kept/dropped in whole tiles", q, k, v, 0.5, blocks != 0)

    # WindowAttention against the reference with the window mask.
    wcases = [((100,), (16,), (5,)), ((12, 20), (5, 6), (2, 3)), ((8, 8, 8), (4, 4, 4), (2, 2, 2)),
              ((9, 10, 11), (4, 3, 5), (1, 2, 3)), ((16, 16), (16, 16), (3, 5))]
    for dt in DTYPES.values():
        for grid, win, shift in wcases:
            for d, dv, hkv in ((32, 32, 2), (16, 40, 1)):
                n = math.prod(grid)
                q = torch.randn(2, 2, n, d, device=DEV, generator=gen).to(dt)
                k = torch.randn(2, hkv, n, d, device=DEV, generator=gen).to(dt)
                v = torch.randn(2, hkv, n, dv, device=DEV, generator=gen).to(dt)
                ref = reference(q, k, v, d ** -0.5, window_mask(grid, win, shift))
                for path in paths_for(dt):
                    set_path(path)
                    try:
                        out = attnopt_window(q, k, v, d ** -0.5, grid, win, shift)
                        sync()
                        err = rel_err(out, ref)
                    except RuntimeError as e:
                        print(f"ERROR window: {e}", flush=True)
                        err = math.inf
                    res.add(f"window {grid} w{win} s{shift} d={d}/{dv}", dt, path, err, TOL[dt])
                set_path("auto")
    print(f"correctness: {len(res.rows)} runs, {res.failures} failed ({time.time() - t0:.1f}s)", flush=True)


# ---------------------------------------------------------------- benchmarks

def timed(fn, max_s=2.0):
    """Median ms of cudaEvent-timed runs and the extra peak memory (MiB)."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    first = s.elapsed_time(e)
    peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
    reps = 0 if first > 1000 * max_s / 3 else max(3, min(20, int(1000 * max_s / max(first, 1e-3))))
    times = event_times(fn, reps)
    return (statistics.median(times) if times else first), peak


def event_times(fn, reps):
    """cudaEvent-timed ms of reps calls of fn, one sample per call."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return times


class Bench:
    def __init__(self):
        self.rows = []
        self.ceiling = None

    def run(self, case, impl, flops, fn, note="", max_s=2.0):
        try:
            ms, mib = timed(fn, max_s)
            tf = flops / (ms * 1e-3) / 1e12
            self.rows.append([case, impl, f"{ms:.3f}", f"{tf:.1f}", self.pct(tf), f"{mib:.0f}", note])
            print(f"  {case:34s} {impl:18s} {ms:10.3f} ms {tf:8.1f} TFLOP/s {mib:9.0f} MiB", flush=True)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            self.rows.append([case, impl, "OOM", "", "", "", note])
            print(f"  {case:34s} {impl:18s} OOM", flush=True)
        except Exception as ex:  # unsupported backend configuration and the like
            torch.cuda.synchronize()
            msg = str(ex).strip().splitlines()[0][:60] if str(ex).strip() else type(ex).__name__
            self.rows.append([case, impl, "n/a", "", "", "", msg])
            print(f"  {case:34s} {impl:18s} n/a: {msg}", flush=True)

    def pct(self, tf):
        return f"{100 * tf / self.ceiling:.0f}%" if self.ceiling else ""

    def table(self):
        head = "| case | implementation | ms | TFLOP/s | % of bf16 matmul | extra peak MiB | note |"
        lines = [head, "|---|---|---:|---:|---:|---:|---|"]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)


def sdpa_fn(backend, q, k, v, scale, mask=None, causal=False):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
          "math": SDPBackend.MATH}[backend]
    kw = {"enable_gqa": True} if q.shape[1] != k.shape[1] else {}

    def fn():
        with sdpa_kernel(be):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, **kw)
    return fn


def naive_fn(q, k, v, scale, mask=None):
    def fn():
        s = torch.matmul(q, k.transpose(-1, -2)) * scale
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
        return torch.matmul(torch.softmax(s, -1), v)
    return fn


def compare_all(bench, case, q, k, v, scale, mask=None, causal=False, simt=True, baselines=True, max_s=2.0):
    b, h, nq, dqk = q.shape
    nk, dv = k.shape[2], v.shape[-1]
    flops = 2.0 * b * h * nq * nk * (dqk + dv) * (0.5 if causal else 1.0)
    out = torch.empty(b, h, nq, dv, dtype=q.dtype, device=DEV)
    set_path("auto")
    bench.run(case, "attnopt", flops, lambda: attnopt_flash(q, k, v, scale, mask, causal, out), max_s=max_s)
    if simt and q.dtype != torch.float32:
        set_path("simt")
        bench.run(case, "attnopt SIMT", flops, lambda: attnopt_flash(q, k, v, scale, mask, causal, out), max_s=max_s)
        set_path("auto")
    if baselines:
        bmask = mask
        if mask is not None and causal:
            bmask = None  # not combined in the benchmarks
        for be in ("flash", "efficient", "math"):
            bench.run(case, f"SDPA {be}", flops, sdpa_fn(be, q, k, v, scale, bmask, causal), max_s=max_s)
        if not causal:
            bench.run(case, "naive matmul", flops, naive_fn(q, k, v, scale, mask), max_s=max_s)


def matmul_ms(n):
    a = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
    return timed(lambda: torch.matmul(a, b))[0]


def benchmarks(bench, quick):
    gen = torch.Generator(device=DEV)
    gen.manual_seed(1)
    ms = matmul_ms(8192)
    bench.ceiling = 2 * 8192 ** 3 / (ms * 1e-3) / 1e12
    bench.rows.append(["bf16 matmul 8192^3 (ceiling)", "torch.matmul", f"{ms:.3f}", f"{bench.ceiling:.1f}", "100%",
                       "", ""])

    for dname, dt in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        for d in (64, 128):
            for n in ((1024, 4096) if quick else (4096, 8192, 16384)):
                q, k, v = (torch.randn(1, 16, n, d, device=DEV, generator=gen, dtype=dt) for _ in range(3))
                compare_all(bench, f"{dname} H=16 d={d} N={n}", q, k, v, d ** -0.5,
                            simt=n <= 4096 and dt == torch.bfloat16, max_s=1.0)
            q, k, v = (torch.randn(1, 16, 8192, d, device=DEV, generator=gen, dtype=dt) for _ in range(3))
            compare_all(bench, f"{dname} H=16 d={d} N=8192 causal", q, k, v, d ** -0.5, causal=True, simt=False,
                        max_s=1.0)

    # Seed 1: 16 heads of dim 4 with a (1,1,N,N) bool mask, N = 10,000, fp16.
    n = 10000
    q, k, v = (torch.randn(1, 16, n, 4, device=DEV, generator=gen, dtype=torch.float16) for _ in range(3))
    mask = torch.rand(1, 1, n, n, device=DEV, generator=gen) < 0.9
    compare_all(bench, "seed: 16 heads d=4 bool N=10k f16", q, k, v, 0.5, mask)
    del q, k, v, mask

    # Seed 2: SAGAN at 256x256: Dqk 8, Dv 64, N = 65,536, no scale.
    n = 65536
    for dt in (torch.float32, torch.bfloat16):
        q = torch.randn(1, 1, n, 8, device=DEV, generator=gen).to(dt)
        k = torch.randn(1, 1, n, 8, device=DEV, generator=gen).to(dt)
        v = torch.randn(1, 1, n, 64, device=DEV, generator=gen).to(dt)
        compare_all(bench, f"seed: SAGAN 8/64 N=65536 {str(dt)[6:]}", q, k, v, 1.0, simt=False, max_s=3.0)
        del q, k, v

    # Seed 3: CPA3D, 4 heads of dim 32 over a 128^3 grid (N = 2,097,152), bf16.
    n = 128 ** 3
    q, k, v = (torch.randn(1, 4, n, 32, device=DEV, generator=gen, dtype=torch.bfloat16) for _ in range(3))
    out = torch.empty_like(q)
    # Exact attention costs 2.25e15 FLOPs: estimate from a 64^3 slice first.
    n_small = 64 ** 3
    qs, ks, vs = q[:, :, :n_small], k[:, :, :n_small], v[:, :, :n_small]
    ms_small, _ = timed(lambda: attnopt_flash(qs, ks, vs, 32 ** -0.5, out=out[:, :, :n_small]), max_s=1.0)
    est_s = ms_small * 1e-3 * (n / n_small) ** 2
    flops = 2.0 * 4 * n * n * 64
    case = "seed: CPA3D exact N=2.1M d=32 bf16"
    if quick or est_s > 60:
        bench.rows.append([case, "attnopt", "skipped", "", "", "", f"estimated {est_s:.0f}s"])
    else:
        bench.run(case, "attnopt", flops, lambda: attnopt_flash(q, k, v, 32 ** -0.5, out=out), max_s=0.1)
        bench.run(case, "SDPA flash", flops, sdpa_fn("flash", q, k, v, 32 ** -0.5), max_s=0.1)
    wflops = 2.0 * 4 * n * 512 * 64
    for shift in ((0, 0, 0), (4, 4, 4)):
        bench.run(f"seed: CPA3D window 8^3 shift {shift[0]}", "attnopt Window", wflops,
                  lambda: attnopt_window(q, k, v, 32 ** -0.5, (128, 128, 128), (8, 8, 8), shift, out=out))

    def partitioned():  # torch baseline: window partition + SDPA, no shift
        def part(t):
            t = t.view(4, 16, 8, 16, 8, 16, 8, 32).permute(1, 3, 5, 0, 2, 4, 6, 7)
            return t.reshape(4096, 4, 512, 32)
        o = F.scaled_dot_product_attention(part(q), part(k), part(v), scale=32 ** -0.5)
        return o.view(16, 16, 16, 4, 8, 8, 8, 32).permute(3, 0, 4, 1, 5, 2, 6, 7).reshape(1, 4, n, 32)
    bench.run("seed: CPA3D window 8^3 shift 0", "torch partition+SDPA", wflops, partitioned)


def main():
    global LIB, DEV, PATHS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="path of libattnopt.so built with CUDA")
    ap.add_argument("--out", default="", help="directory for gpu_check.json and gpu_check.md")
    ap.add_argument("--quick", action="store_true", help="smaller matrix and sweep")
    ap.add_argument("--skip-bench", action="store_true")
    ap.add_argument("--skip-correctness", action="store_true")
    ap.add_argument("--paths", default="auto,simt",
                    help="CUDA kernel paths to check, comma separated: auto (the library's default), simt, "
                         "mma (ATTNOPT_CUDA_HOPPER=0), hopper (ATTNOPT_CUDA_HOPPER=1)")
    ap.add_argument("--dtypes", default="f32,f16,bf16", help="I/O dtypes of the correctness runs")
    ap.add_argument("--tag", default="", help="suffix of the output files (gpu_check<tag>.md/.json)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help="cpu: dry run of the correctness part through the CPU entry points (no benchmarks)")
    args = ap.parse_args()
    DEV = args.device
    PATHS = tuple(p for p in args.paths.split(",") if p)
    if not PATHS or any(p not in ("auto", "simt", "mma", "hopper") for p in PATHS):
        sys.exit("--paths takes auto, simt, mma and/or hopper")
    keep = [d for d in args.dtypes.split(",") if d]
    if not keep or any(d not in DTYPES for d in keep):
        sys.exit("--dtypes takes f32, f16 and/or bf16")
    for name in list(DTYPES):
        if name not in keep:
            del DTYPES[name]
    LIB = ac.load(args.lib)
    if DEV == "cpu":
        args.skip_bench = True
        print(f"CPU dry run, torch {torch.__version__}", flush=True)
    else:
        if not LIB.attnopt_has_cuda():
            sys.exit(f"{args.lib} was built without CUDA")
        print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  CUDA {torch.version.cuda}", flush=True)
    t0 = time.time()
    res = Results()
    if not args.skip_correctness:
        correctness(res, args.quick)
    bench = Bench()
    if not args.skip_bench:
        print("benchmarks:", flush=True)
        benchmarks(bench, args.quick)

    worst = {}
    for r in res.rows:
        key = (r["dtype"], r["path"])
        worst[key] = max(worst.get(key, 0.0), r["err"])
    lines = ["| dtype | path | runs | failed | worst rel err | threshold |", "|---|---|---:|---:|---:|---:|"]
    for (dt, path), w in sorted(worst.items()):
        sel = [r for r in res.rows if r["dtype"] == dt and r["path"] == path]
        lines.append(f"| {dt} | {path} | {len(sel)} | {sum(not r['ok'] for r in sel)} | {w:.2e} | "
                     f"{sel[0]['tol']:g} |")
    summary = "\n".join(lines)
    table = bench.table()
    report = ""
    if res.rows:
        report += f"## Correctness ({', '.join(PATHS) if DEV != 'cpu' else 'cpu'})\n\n{summary}\n\n"
    if bench.rows:
        report += f"## Benchmarks\n\n{table}\n"
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"gpu_check{args.tag}.json"), "w") as f:
            json.dump({"correctness": res.rows, "bench": bench.rows}, f, indent=1, default=str)
        with open(os.path.join(args.out, f"gpu_check{args.tag}.md"), "w") as f:
            f.write(report)
    print(f"\ntotal {time.time() - t0:.0f}s\n\n{report}")
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
