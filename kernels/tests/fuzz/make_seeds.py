#!/usr/bin/env python3
"""Writes the hand-made seeds of the fuzz corpus (tests/fuzz/corpus/seed-*):
issue 24's cases in the input format fuzz_params.cpp describes. The rest of
the corpus is what libFuzzer found from them, merged (-merge=1).
Usage: python3 make_seeds.py [CORPUS_DIR]
"""
import os
import struct
import sys

# Indices into fuzz_params.cpp's kInt64s and kFloats.
I = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 7: 6, 8: 7, 9: 8, 16: 9, 17: 10, 63: 11, 64: 12, 65: 13, 127: 14,
     128: 15, 129: 16, "2^32": 24, "2^62": 26, "wrap5": 27, "max": 28, "max-1": 29, "min": 30}
F_HALF, F_ZERO, F_NEG, F_NAN = 0, 3, 5, 10


def i64(v):
    """One int64 field: a table index, or 0xff and 8 raw bytes."""
    if v in I:
        return bytes([I[v]])
    return b"\xff" + struct.pack("<q", v)


def dims(*ds):  # an input shape: rank byte, then (1, d) per small dim or (0, int64) for any
    out = bytes([len(ds)])
    for d in ds:
        out += bytes([1, d]) if isinstance(d, int) and 0 <= d < 70 else b"\x00" + i64(d)
    return out


def attr_int(v):
    return b"\x01" + i64(v)


def attr_float(idx):
    return b"\x02" + bytes([idx])


def attr_ints(*vs):
    return b"\x04" + bytes([len(vs)]) + b"".join(i64(v) for v in vs)


PRESENT, ABSENT = b"\x01", b"\x00"
FLOAT, BOOL = b"\x00", b"\x03"


def flash_ort(scale, causal, window, q, k, v):
    """Mode 2: attributes scale, causal, sliding_window (each b'' = absent), Q, K, V, no mask."""
    out = b"\x02"
    for a in (scale, causal, window):
        out += PRESENT + a if a else ABSENT
    out += ABSENT * 3  # spatial_shape, window, shift
    for t in (q, k, v):
        out += FLOAT + dims(*t)
    return out + b"\x00"  # mask absent


def window_ort(grid, win, shift, shape):
    """Mode 3: scale 0.5 and the three lists, Q = K = V of shape."""
    out = b"\x03" + PRESENT + attr_float(F_HALF) + ABSENT * 2
    out += PRESENT + attr_ints(*grid) + PRESENT + attr_ints(*win) + PRESENT + attr_ints(*shift)
    out += b"\x00"  # no generated geometry
    for _ in range(3):
        out += FLOAT + dims(*shape)
    return out + b"\x00"


def flash_abi(nq, nk, window, causal=1, scale=F_HALF):
    """Mode 0: f32, B 1, Hq 2, Hkv 1, d 4, contiguous strides, no mask."""
    out = b"\x00\x01" + i64(1) + i64(2) + i64(1) + i64(nq) + i64(nk) + i64(4) + i64(4)
    out += b"\x00" * 4 + bytes([scale, causal]) + i64(window) + b"\x01" + b"\x01" * 4
    return out


def window_abi(grid, win, shift):
    """Mode 1: f32, B = Hq = Hkv = 1, d 4, len = the grid's wrapping product."""
    out = b"\x01\x01" + i64(1) + i64(1) + i64(1) + i64(4) + i64(4) + bytes([len(grid)])
    for a in range(3):
        out += i64(grid[a]) + i64(win[a]) + i64(shift[a]) if a < len(grid) else i64(0) * 3
    return out + b"\x00" + bytes([F_HALF])


SEEDS = {
    "flash-window-max-nq-over-nk": flash_abi(127, 64, "max"),
    "flash-window-max-nq-under-nk": flash_abi(17, 65, "max-1"),
    "flash-scale-nan": flash_abi(8, 8, 0, causal=0, scale=F_NAN),
    "window-wrap-to-4-shift": window_abi(["wrap5", 5], [1, 1], [5, 0]),
    "window-wrap-empty": window_abi(["max", "max", 4], [2, 1, 1], [0, 0, 0]),
    "window-shift-extremes": window_abi([5, 7], [2, 3], ["min", "max"]),
    "ort-flash-causal-float": flash_ort(attr_float(F_HALF), attr_float(F_HALF), b"", (1, 2, 8, 4), (1, 2, 8, 4), (1, 2, 8, 4)),
    "ort-flash-window-float": flash_ort(b"", attr_int(1), attr_float(F_HALF), (1, 2, 8, 4), (1, 2, 8, 4), (1, 2, 8, 4)),
    "ort-flash-scale-int": flash_ort(attr_int(2), b"", b"", (1, 2, 8, 4), (1, 2, 8, 4), (1, 2, 8, 4)),
    "ort-flash-window-max": flash_ort(attr_float(F_HALF), attr_int(1), attr_int("max"), (1, 2, 63, 4), (1, 1, 9, 4), (1, 1, 9, 4)),
    "ort-flash-empty-huge": flash_ort(b"", b"", b"", (0, "2^62", "2^62", 4), (0, "2^62", "2^62", 4), (0, 1, 1, 4)),
    "ort-window-wrap": window_ort(["wrap5", 5], [1, 1], [5, 0], (1, 1, 4, 4)),
    "ort-window-ok": window_ort([4, 6], [3, 4], [1, "min"], (1, 2, 24, 8)),
}

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {out}")
