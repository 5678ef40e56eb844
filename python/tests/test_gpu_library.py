"""The wheel's custom-op library is the CUDA-enabled one where it was built
with CUDA (scripts/test-python.sh sets ATTNOPT_EXPECT_CUDA_LIBRARY=1 when it
packages kernels/build/cuda13's), and on this machine, which has no CUDA, it
still loads and runs the CPU kernels without mapping any CUDA library."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest

import attnopt


def build_info() -> str:
    f = ctypes.CDLL(attnopt.get_library_path()).attnopt_ort_build_info
    f.restype = ctypes.c_char_p
    return f().decode()


def test_library_says_how_it_was_built():
    info = build_info()
    assert info.startswith("attnopt_ort cuda="), info
    if os.environ.get("ATTNOPT_EXPECT_CUDA_LIBRARY") == "1":
        # SASS for sm_75 ... sm_90 and PTX of compute_90 (kernels/CMakeLists.txt).
        assert info.startswith("attnopt_ort cuda=13."), info
        assert info.endswith("archs=75-real,80-real,86-real,89-real,90"), info


# Runs in a fresh interpreter so that /proc/self/maps shows only what this
# library and ONNX Runtime's CPU package load.
CHILD = r"""
import json, sys
import numpy as np
import onnxruntime as ort
import attnopt
src, dst = sys.argv[1], sys.argv[2]
x = np.random.default_rng(3).standard_normal((1, 64, 16, 16)).astype(np.float32)
want = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
sess = ort.InferenceSession(dst, attnopt.register(), providers=["CPUExecutionProvider"])
got = sess.run(None, {"x": x})[0]
maps = open("/proc/self/maps").read()
cuda = sorted({l.split()[-1] for l in maps.splitlines() if "libcuda" in l or "libcudart" in l})
print(json.dumps({"err": float(np.abs(got - want).max() / np.abs(want).max()), "cuda": cuda}))
"""


def test_cpu_kernels_run_without_cuda(sagan):
    pytest.importorskip("onnxruntime")
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("needs /proc (Linux)")
    res = attnopt.rewrite(sagan)
    out = subprocess.run([sys.executable, "-c", CHILD, str(sagan), res.output], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["err"] < 1e-4, got
    assert got["cuda"] == [], f"CUDA libraries mapped on a CPU run: {got['cuda']} ({build_info()})"
