"""ctypes binding of kernels/include/attnopt/attnopt.h.

Pure standard library, so the binding itself is tested on machines without
PyTorch (tests/abi_check.py) and reused by the GPU check (gpu_check.py).
"""
import ctypes

# The limits and empty_rows values come from the op table (internal/opdef),
# through the generated attnopt_ops.py beside this file.
from attnopt_ops import EMPTY_LITERAL, EMPTY_LITERAL_ZERO, EMPTY_ZERO, HEAD_DIM_MAX, HEAD_DIM_MIN, WINDOW_AXES_MAX  # noqa: F401

F32, F16, BF16 = 0, 1, 2
MASK_NONE, MASK_BOOL, MASK_F32, MASK_F16, MASK_BF16 = 0, 1, 2, 3, 4
OK = 0

I64x3 = ctypes.c_int64 * WINDOW_AXES_MAX
I64x4 = ctypes.c_int64 * 4


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("stride", I64x4)]


# The leading fields both version-1 structs share (WindowAttention has one
# len for Nq and Nk), and each op's own fields after them.
_HEADS = [("dtype", ctypes.c_int), ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
          ("heads_kv", ctypes.c_int64)]
_DIMS_OPERANDS = [("dim_qk", ctypes.c_int64), ("dim_v", ctypes.c_int64), ("q", Tensor), ("k", Tensor),
                  ("v", Tensor), ("o", ctypes.c_void_p), ("o_stride", I64x4)]
_LENS = [("len_q", ctypes.c_int64), ("len_k", ctypes.c_int64)]
_FLASH_OWN = [
    ("mask_type", ctypes.c_int),
    ("mask", ctypes.c_void_p),
    ("mask_stride", I64x4),
    ("scale", ctypes.c_float),
    ("causal", ctypes.c_int),
    ("window", ctypes.c_int64),
    ("empty_rows", ctypes.c_int),
    ("mask_fill", ctypes.c_float),
    ("causal_fill", ctypes.c_float),
    ("fill_once", ctypes.c_int),
    ("fill_dtype", ctypes.c_int),
    ("softcap", ctypes.c_float),
    ("mask_drop", ctypes.c_float),
]
_WINDOW_OWN = [("ndim", ctypes.c_int), ("grid", I64x3), ("window", I64x3), ("shift", I64x3), ("scale", ctypes.c_float)]


class FlashParams(ctypes.Structure):
    _fields_ = _HEADS + _LENS + _DIMS_OPERANDS + _FLASH_OWN


class WindowParams(ctypes.Structure):
    _fields_ = _HEADS + [("len", ctypes.c_int64)] + _DIMS_OPERANDS + _WINDOW_OWN


class QKV(ctypes.Structure):
    """attnopt_qkv: the shared part of the version-2 structs."""
    _fields_ = _HEADS + _LENS + _DIMS_OPERANDS


class FlashParamsV2(ctypes.Structure):
    _fields_ = [("qkv", QKV)] + _FLASH_OWN


class WindowParamsV2(ctypes.Structure):
    _fields_ = [("qkv", QKV)] + _WINDOW_OWN


def load(path):
    """Loads libattnopt (or libattnopt_cpu) and declares the signatures."""
    lib = ctypes.CDLL(path)
    fp, wp = ctypes.POINTER(FlashParams), ctypes.POINTER(WindowParams)
    for name, args in [
        ("attnopt_cpu_flash_attention_fwd", [fp]),
        ("attnopt_cpu_window_attention_fwd", [wp]),
        ("attnopt_cuda_flash_attention_fwd", [fp, ctypes.c_void_p]),
        ("attnopt_cuda_window_attention_fwd", [wp, ctypes.c_void_p]),
        ("attnopt_flash_params_check", [fp]),
        ("attnopt_window_params_check", [wp]),
        ("attnopt_has_cuda", []),
        ("attnopt_status_string", [ctypes.c_int]),
        ("attnopt_cpu_set_num_threads", [ctypes.c_int]),
    ]:
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = ctypes.c_int
    # Version 2, in libraries that have it (an A/B base may predate it).
    fp2, wp2 = ctypes.POINTER(FlashParamsV2), ctypes.POINTER(WindowParamsV2)
    for name, args in [
        ("attnopt_cpu_flash_attention_fwd_v2", [fp2]),
        ("attnopt_cpu_window_attention_fwd_v2", [wp2]),
        ("attnopt_cuda_flash_attention_fwd_v2", [fp2, ctypes.c_void_p]),
        ("attnopt_cuda_window_attention_fwd_v2", [wp2, ctypes.c_void_p]),
        ("attnopt_flash_params_check_v2", [fp2]),
        ("attnopt_window_params_check_v2", [wp2]),
    ]:
        f = getattr(lib, name, None)
        if f is not None:
            f.argtypes = args
            f.restype = ctypes.c_int
    lib.attnopt_status_string.restype = ctypes.c_char_p
    lib.attnopt_cpu_set_num_threads.restype = None
    return lib


def tensor(ptr, strides):
    """A Tensor from a pointer and (b, h, n, d) element strides."""
    return Tensor(ptr, I64x4(*strides))


def flash_params(dtype, dims, q, k, v, o, o_stride, scale, causal=False, mask=None, mask_type=MASK_NONE,
                 mask_stride=(0, 0, 0, 0), softcap=0.0):
    """dims = (B, Hq, Hkv, Nq, Nk, Dqk, Dv); q/k/v = (pointer, strides)."""
    b, hq, hkv, nq, nk, dqk, dv = dims
    p = FlashParams(dtype, b, hq, hkv, nq, nk, dqk, dv, tensor(*q), tensor(*k), tensor(*v), o,
                    I64x4(*o_stride), mask_type, mask, I64x4(*mask_stride), scale, int(bool(causal)))
    p.softcap = softcap
    return p


def window_params(dtype, dims, q, k, v, o, o_stride, grid, window, shift, scale):
    """dims = (B, Hq, Hkv, N, Dqk, Dv); grid/window/shift have 1..WINDOW_AXES_MAX entries."""
    b, hq, hkv, n, dqk, dv = dims
    nd = len(grid)
    pad = lambda xs: I64x3(*(list(xs) + [0] * (WINDOW_AXES_MAX - nd)))
    return WindowParams(dtype, b, hq, hkv, n, dqk, dv, tensor(*q), tensor(*k), tensor(*v), o, I64x4(*o_stride),
                        nd, pad(grid), pad(window), pad(shift), scale)


def v2(p):
    """The version-2 struct of a version-1 one, field for field."""
    window = isinstance(p, WindowParams)
    out = (WindowParamsV2 if window else FlashParamsV2)()
    for name, _ in QKV._fields_:
        src = "len" if window and name in ("len_q", "len_k") else name
        setattr(out.qkv, name, getattr(p, src))
    for name, _ in out._fields_[1:]:
        setattr(out, name, getattr(p, name))
    return out


def bcast_strides(shape, strides):
    """Strides over (B, H, Nq, Nk) of a mask of rank 2..4: right-aligned, 0 on size-1 axes."""
    r = len(shape)
    out = [0, 0, 0, 0]
    for i in range(r):
        out[4 - r + i] = 0 if shape[i] == 1 else strides[i]
    return out
