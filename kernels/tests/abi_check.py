"""Checks the ctypes binding (bench/attnopt_ctypes.py) against the C ABI:
struct layout from tests/abi_layout, the op table's limits and empty_rows
values (bench/attnopt_ops.py, generated from internal/opdef) through the
params checks, then real calls into the CPU entry points on small problems
compared with a plain-Python reference.
Usage: abi_check.py LIBATTNOPT ABI_LAYOUT_EXE"""
import array
import ctypes
import json
import math
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import attnopt_ctypes as ac  # noqa: E402

failures = 0


def check(cond, msg):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", msg)


def layout(exe):
    want = json.loads(subprocess.check_output([exe]).decode())
    types = {"attnopt_flash_params": ac.FlashParams, "attnopt_window_params": ac.WindowParams,
             "attnopt_tensor": ac.Tensor, "attnopt_qkv": ac.QKV, "attnopt_flash_params_v2": ac.FlashParamsV2,
             "attnopt_window_params_v2": ac.WindowParamsV2}
    for key, off in want.items():
        kind, name = key.split(".")
        got = ctypes.sizeof(types[name]) if kind == "sizeof" else getattr(types[kind], name).offset
        check(got == off, f"{key}: ctypes {got}, C {off}")
    print(f"layout: {len(want)} offsets/sizes compared")


def reference(q, k, v, dims, scale, admit, addmask, softcap=0.0):
    b_, hq, hkv, nq, nk, dqk, dv = dims
    out = []
    for b in range(b_):
        for h in range(hq):
            hk = h // (hq // hkv)
            for i in range(nq):
                s = []
                for j in range(nk):
                    if not admit(b, h, i, j):
                        s.append(-math.inf)
                        continue
                    dot = sum(q[((b * hq + h) * nq + i) * dqk + c] * k[((b * hkv + hk) * nk + j) * dqk + c]
                              for c in range(dqk))
                    x = dot * scale
                    if softcap > 0:
                        x = softcap * math.tanh(x / softcap)
                    s.append(x + addmask(b, h, i, j))
                mx = max(s)
                if mx == -math.inf:
                    out.extend([0.0] * dv)
                    continue
                p = [math.exp(x - mx) for x in s]
                tot = sum(p)
                for c in range(dv):
                    out.append(sum(p[j] * v[((b * hkv + hk) * nk + j) * dv + c] for j in range(nk)) / tot)
    return out


def contiguous(h, n, d):
    return (h * n * d, n * d, d, 1)


def rel_err(out, ref):
    num = sum((o - r) ** 2 for o, r in zip(out, ref))
    den = sum(r * r for r in ref)
    return math.sqrt(num / den) if den else math.sqrt(num)


def same_through_v2(lib, name, p, o):
    """The version-2 call on the same problem writes the same bits as the
    version-1 call did into o (the output pointer is redirected)."""
    first = bytes(o)
    o2 = array.array(o.typecode, [math.nan] * len(o))
    p2 = ac.v2(p)
    p2.qkv.o = o2.buffer_info()[0]
    rc = getattr(lib, name + "_v2")(ctypes.byref(p2))
    check(rc == ac.OK, f"{name}_v2 status {rc}")
    check(bytes(o2) == first, f"{name}_v2 wrote other bits than {name}")


def flash_call(lib, softcap=0.0):
    rnd = random.Random(5)
    dims = (2, 4, 2, 9, 13, 6, 5)
    b, hq, hkv, nq, nk, dqk, dv = dims
    q = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * hq * nq * dqk)])
    k = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * hkv * nk * dqk)])
    v = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * hkv * nk * dv)])
    o = array.array("f", [math.nan] * (b * hq * nq * dv))
    mask = (ctypes.c_uint8 * (nq * nk))(*[(i % 3 != 0) or (j < 2) for i in range(nq) for j in range(nk)])
    mask[4 * nk: 5 * nk] = bytes(nk)  # query row 4 sees nothing
    ptr = lambda a: a.buffer_info()[0]
    p = ac.flash_params(ac.F32, dims, (ptr(q), contiguous(hq, nq, dqk)), (ptr(k), contiguous(hkv, nk, dqk)),
                        (ptr(v), contiguous(hkv, nk, dv)), ptr(o), contiguous(hq, nq, dv), 0.7, causal=True,
                        mask=ctypes.addressof(mask), mask_type=ac.MASK_BOOL,
                        mask_stride=ac.bcast_strides((nq, nk), (nk, 1)), softcap=softcap)
    rc = lib.attnopt_cpu_flash_attention_fwd(ctypes.byref(p))
    check(rc == ac.OK, f"flash status {rc}: {lib.attnopt_status_string(rc)}")
    admit = lambda bb, h, i, j: bool(mask[i * nk + j]) and j <= i + nk - nq
    ref = reference(q, k, v, dims, 0.7, admit, lambda *a: 0.0, softcap)
    err = rel_err(o, ref)
    print(f"flash through ctypes (softcap {softcap}): rel err {err:.2e}")
    check(err < 1e-5, f"flash rel err {err}")
    check(all(o[((0 * hq + 1) * nq + 4) * dv + c] == 0.0 for c in range(dv)), "masked row must be zero")
    same_through_v2(lib, "attnopt_cpu_flash_attention_fwd", p, o)


def window_call(lib):
    rnd = random.Random(6)
    grid, win, shift = (5, 7), (2, 3), (1, 4)
    n = grid[0] * grid[1]
    dims = (1, 2, 1, n, 4, 3)
    b, hq, hkv, _, dqk, dv = dims
    q = array.array("f", [rnd.uniform(-1, 1) for _ in range(hq * n * dqk)])
    k = array.array("f", [rnd.uniform(-1, 1) for _ in range(hkv * n * dqk)])
    v = array.array("f", [rnd.uniform(-1, 1) for _ in range(hkv * n * dv)])
    o = array.array("f", [math.nan] * (hq * n * dv))
    ptr = lambda a: a.buffer_info()[0]
    p = ac.window_params(ac.F32, dims, (ptr(q), contiguous(hq, n, dqk)), (ptr(k), contiguous(hkv, n, dqk)),
                         (ptr(v), contiguous(hkv, n, dv)), ptr(o), contiguous(hq, n, dv), grid, win, shift, 0.5)
    rc = lib.attnopt_cpu_window_attention_fwd(ctypes.byref(p))
    check(rc == ac.OK, f"window status {rc}")

    def wid(t):
        c = (t // grid[1], t % grid[1])
        return tuple(((c[a] - shift[a]) % grid[a]) // win[a] for a in range(2))

    ref = reference(q, k, v, (b, hq, hkv, n, n, dqk, dv), 0.5, lambda bb, h, i, j: wid(i) == wid(j),
                    lambda *a: 0.0)
    err = rel_err(o, ref)
    print(f"window through ctypes: rel err {err:.2e}")
    check(err < 1e-5, f"window rel err {err}")
    same_through_v2(lib, "attnopt_cpu_window_attention_fwd", p, o)


def limits(lib):
    """The params checks accept the table's head sizes and empty_rows values and refuse one past them."""
    n = 0
    for dqk, dv, ok in [(ac.HEAD_DIM_MIN, ac.HEAD_DIM_MIN, True), (ac.HEAD_DIM_MAX, ac.HEAD_DIM_MAX, True),
                        (ac.HEAD_DIM_MAX + 1, 4, False), (4, ac.HEAD_DIM_MAX + 1, False), (ac.HEAD_DIM_MIN - 1, 4, False)]:
        p = ac.flash_params(ac.F32, (1, 1, 1, 0, 0, dqk, dv), (None, (0,) * 4), (None, (0,) * 4), (None, (0,) * 4),
                            None, (0,) * 4, 1.0)
        got = lib.attnopt_flash_params_check(ctypes.byref(p)) == ac.OK
        check(got == ok, f"flash params check of Dqk {dqk} Dv {dv}: {got}, want {ok}")
        got = lib.attnopt_flash_params_check_v2(ctypes.byref(ac.v2(p))) == ac.OK
        check(got == ok, f"flash params check (v2) of Dqk {dqk} Dv {dv}: {got}, want {ok}")
        buf = (ctypes.c_float * 4)()
        w = ac.window_params(ac.F32, (1, 1, 1, 1, dqk, dv), (ctypes.addressof(buf), (0,) * 4),
                             (ctypes.addressof(buf), (0,) * 4), (ctypes.addressof(buf), (0,) * 4),
                             ctypes.addressof(buf), (0,) * 4, (1,), (1,), (0,), 1.0)
        got = lib.attnopt_window_params_check(ctypes.byref(w)) == ac.OK
        check(got == ok, f"window params check of Dqk {dqk} Dv {dv}: {got}, want {ok}")
        got = lib.attnopt_window_params_check_v2(ctypes.byref(ac.v2(w))) == ac.OK
        check(got == ok, f"window params check (v2) of Dqk {dqk} Dv {dv}: {got}, want {ok}")
        n += 4
    modes = [ac.EMPTY_ZERO, ac.EMPTY_LITERAL, ac.EMPTY_LITERAL_ZERO]
    for mode in modes + [max(modes) + 1, min(modes) - 1]:
        p = ac.flash_params(ac.F32, (1, 1, 1, 0, 0, 4, 4), (None, (0,) * 4), (None, (0,) * 4), (None, (0,) * 4),
                            None, (0,) * 4, 1.0)
        p.empty_rows, p.mask_fill, p.causal_fill = mode, -math.inf, -math.inf
        got = lib.attnopt_flash_params_check(ctypes.byref(p)) == ac.OK
        check(got == (mode in modes), f"flash params check of empty_rows {mode}: {got}")
        got = lib.attnopt_flash_params_check_v2(ctypes.byref(ac.v2(p))) == ac.OK
        check(got == (mode in modes), f"flash params check (v2) of empty_rows {mode}: {got}")
        n += 2
    print(f"limits: {n} params checks against the op table")


def main():
    lib = ac.load(sys.argv[1])
    layout(sys.argv[2])
    limits(lib)
    flash_call(lib)
    flash_call(lib, softcap=0.3)
    window_call(lib)
    print("ctypes binding: %s" % ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
