#!/usr/bin/env python3
"""The Hopper path's micro-GEMM (src/cuda/wgmma_gemm.cu) against NumPy.

The first check on a device (lease.sh call 1): wgmma's fragment layouts,
the descriptors and TMA's swizzle are read from the PTX ISA by this project,
and the CPU emulation (tests/emu) shares that reading with the kernels. A
mismatch here means the reading is wrong: fix the emulator first, then the
kernels. C = A . B in float32 from f16/bf16 inputs, B K-major (N x K) and
MN-major (K x N), shapes with partial tiles; the reference is NumPy float64
on the same rounded inputs. A layout TMA cannot address (a row stride
that is not a multiple of 16 bytes, as MN-major B at N 130) must be refused
with ATTNOPT_ERR_UNSUPPORTED (the attention kernels then take flash_mma.cu);
the H200 run of 2026-12-04 did so. Exit status 1 on any mismatch or error.
Usage: wgmma_gemm_check.py --lib build/libattnopt.so
"""
import argparse
import ctypes
import sys

import numpy as np
import torch

F16, BF16 = 1, 2
UNSUPPORTED = 4  # ATTNOPT_ERR_UNSUPPORTED
SHAPES = [(64, 64, 64), (128, 192, 256), (100, 72, 136), (257, 130, 520), (257, 136, 520), (2048, 2048, 1024)]


def tma_addressable(n, k, mn_major):
    """TMA's rule: every row stride of A (M x K) and B a multiple of 16 bytes."""
    return (2 * k) % 16 == 0 and (2 * (n if mn_major else k)) % 16 == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    args = ap.parse_args()
    lib = ctypes.CDLL(args.lib)
    fn = lib.attnopt_cuda_wgmma_gemm_check
    fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                   ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    gen = torch.Generator(device="cuda")
    gen.manual_seed(5)
    failures = 0
    print("| dtype | M x N x K | B | rel err vs NumPy float64 |\n|---|---|---|---:|")
    for dt, code in ((torch.float16, F16), (torch.bfloat16, BF16)):
        for m, n, k in SHAPES:
            for mn in (0, 1):
                a = torch.randn(m, k, device="cuda", generator=gen).to(dt)
                b = torch.randn(k, n, device="cuda", generator=gen).to(dt)
                bk = b if mn else b.t().contiguous()  # MN-major: (K, N); K-major: (N, K)
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
                rc = fn(code, a.data_ptr(), bk.data_ptr(), c.data_ptr(), m, n, k, mn,
                        ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
                torch.cuda.synchronize()
                ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
                out = c.double().cpu().numpy()
                shape = f"| {str(dt)[6:]} | {m} x {n} x {k} | {'MN' if mn else 'K'}-major |"
                if not tma_addressable(n, k, mn):
                    ok = rc == UNSUPPORTED
                    failures += not ok
                    print(f"{shape} {'refused (row stride not 16-byte aligned), as it must be' if ok else f'FAIL: status {rc}, want {UNSUPPORTED}'} |", flush=True)
                    continue
                err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref)) if rc == 0 else float("inf")
                ok = rc == 0 and np.isfinite(out).all() and err < 1e-5
                failures += not ok
                print(f"{shape} {err:.2e}{'' if ok else f' FAIL (status {rc})'} |", flush=True)
    print(f"micro-GEMM: {failures} failed" if failures else "micro-GEMM: all match NumPy")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
