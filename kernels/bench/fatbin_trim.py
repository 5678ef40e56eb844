#!/usr/bin/env python3
"""List or trim the CUDA fat binaries inside an ELF shared library.

A library's .nv_fatbin section holds containers (magic 0xBA55ED50), each a
list of entries: machine code (an ELF cubin) or PTX for one architecture.
`--keep 90` zeroes the payload of every entry for another architecture in
place: headers, sizes and every ELF offset stay as they were, the CUDA
runtime still finds the entry for the GPU it runs on, and the zeros
compress to nothing. (Used by ort_gpu_bundle.sh to make onnxruntime-gpu's
CUDA provider small enough to carry to a lent H200; whether the runtime
accepts the result is what ort_gpu_lease.sh checks first.)

Usage: fatbin_trim.py LIB                      # per-architecture sizes
       fatbin_trim.py LIB --keep 90 -o OUT     # write the trimmed copy
"""
import argparse
import struct
import sys

MAGIC = 0xBA55ED50
KIND = {1: "ptx", 2: "sass"}


def section(data, name):
    """(offset, size) of an ELF64 section by name."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit("not an ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdr = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = hdr[shstrndx][4]
    for h in hdr:
        end = data.index(b"\0", names + h[0])
        if data[names + h[0]:end].decode() == name:
            return h[4], h[5]
    return None


def entries(data, off, size):
    """Yields (kind, arch, payload offset, payload size) of every entry."""
    p, end = off, off + size
    while p + 16 <= end:
        magic, _ver, hsize, fsize = struct.unpack_from("<IHHQ", data, p)
        if magic != MAGIC:  # containers are 8-byte aligned
            p += 8
            continue
        q, qend = p + hsize, p + hsize + fsize
        while q < qend:
            kind, _v, ehsize, psize = struct.unpack_from("<HHIQ", data, q)
            arch, = struct.unpack_from("<I", data, q + 28)
            yield kind, arch, q + ehsize, psize
            q += ehsize + psize
        p = qend


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lib")
    ap.add_argument("--keep", type=int, help="architecture to keep (e.g. 90); the others' payloads are zeroed")
    ap.add_argument("-o", "--out", help="trimmed copy (with --keep)")
    a = ap.parse_args()
    data = bytearray(open(a.lib, "rb").read())
    sec = section(data, ".nv_fatbin")
    if sec is None:
        raise SystemExit(f"{a.lib}: no .nv_fatbin section")
    sizes, zeroed = {}, 0
    for kind, arch, off, n in entries(data, *sec):
        key = f"{KIND.get(kind, kind)} sm_{arch}"
        sizes[key] = sizes.get(key, 0) + n
        if a.keep is not None and arch != a.keep:
            data[off:off + n] = bytes(n)
            zeroed += n
    for key in sorted(sizes):
        print(f"{key}: {sizes[key] / 2**20:.1f} MiB")
    if a.keep is not None:
        if not sizes.get(f"sass sm_{a.keep}") and not sizes.get(f"ptx sm_{a.keep}"):
            raise SystemExit(f"no code for sm_{a.keep} to keep")
        if not a.out:
            raise SystemExit("--keep needs -o OUT")
        with open(a.out, "wb") as f:
            f.write(data)
        print(f"zeroed {zeroed / 2**20:.1f} MiB of other architectures; wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
