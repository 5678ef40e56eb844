#!/usr/bin/env python3
"""List or trim the CUDA fat binaries inside an ELF shared library.

A library's .nv_fatbin section holds containers (magic 0xBA55ED50), each a
list of entries: machine code (an ELF cubin) or PTX for one architecture.
`--keep 90` zeroes the payload of every entry for another architecture in
place: headers, sizes and every ELF offset stay as they were, the CUDA
runtime still finds the entry for the GPU it runs on, and the zeros
compress to nothing. (Used by ort_gpu_bundle.sh to make onnxruntime-gpu's
CUDA provider small enough to carry to a lent H200; whether the runtime
accepts the result is what lease.sh call 2 checks first.)

`--drop-classes` (with --keep) also zeroes the kept architecture's entries
whose kernels all serve op families no device check launches (FAMILIES
below: MoE, quantised GEMM/GEMV, decoder-only attention, FlashAttention-2
at head dims and types no check runs). An entry is one
CUDA translation unit, so one op family in ONNX Runtime's build. This relies
on CUDA's lazy module loading (lease.sh exports CUDA_MODULE_LOADING=LAZY):
a module is read when one of its kernels first runs, so a zeroed one that
is launched fails with an invalid-image error, never silently. Entries are
zstd-compressed cubins; reading their kernel names needs the zstandard
module (pip install zstandard).

Usage: fatbin_trim.py LIB                      # per-architecture sizes
       fatbin_trim.py LIB --keep 90 -o OUT     # write the trimmed copy
       fatbin_trim.py LIB --keep 90 --drop-classes -o OUT   # and the families
"""
import argparse
import re
import struct
import sys

MAGIC = 0xBA55ED50
KIND = {1: "ptx", 2: "sass"}
ZSTD = b"\x28\xb5\x2f\xfd"

# Op families lease.sh never launches, as data: (name, one, every). An entry
# is dropped when one of its kernel names matches `one` (a name only that
# family's sources produce) or every name matches `every`.
FAMILIES = [
    ("moe", rb"moe_gemm|MoeFCGemm|GroupProblemShape|[Ee]xpert[A-Z]",
     rb"[Mm]oe|[Ee]xpert"),
    ("quantised gemm/gemv", rb"fpA_intB",
     rb"fpA_intB|[Ii]nt4|[Nn][Bb]its|[Dd]equant|fp8|e4m3|e5m2|fp4|gemv"),
    ("decoder attention", rb"xqa|DecoderMaskedMultiHead|masked_multihead",
     rb"xqa|[Mm]asked_multihead|DecoderMaskedMultiHead|[Pp]aged|BlockSparse|[Ss]parse[A-Z_]"),
    # ORT's FlashAttention-2 port compiles one source per head dim and type
    # (flash_fwd[_split]_hdim128_bf16[_causal]_sm80.cu, named in the entry's
    # internal symbols); the checks run f16 at d 64 (ort_gpu_table.py
    # epcheck); f16 d 32 is kept too.
    ("flash attention, other head dims and bf16",
     rb"_flash_fwd_(split_)?hdim(\d+_bf16|96|128|160|192|224|256)_", rb"^$"),
]
# Never dropped, whatever else the entry holds: what ORT's Attention-23,
# MultiHeadAttention and the table's original graphs run (softmax, the
# memory-efficient attention kernels, elementwise, reductions).
KEEP = rb"[Ss]oftmax|AttentionKernel|[Tt]ranspose|[Ee]lementwise|[Rr]educe|[Cc]ast"
KERNEL = re.compile(rb"_Z[A-Za-z0-9_]{8,300}")


def family(cubin_names):
    """The dropped family an entry's kernels belong to, or None to keep it."""
    if not cubin_names or any(re.search(KEEP, n) for n in cubin_names):
        return None
    joined = b" ".join(cubin_names)
    for name, one, every in FAMILIES:
        if (one and re.search(one, joined)) or all(re.search(every, n) for n in cubin_names):
            return name
    return None


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
    ap.add_argument("--drop-classes", action="store_true",
                    help="with --keep: also zero the kept architecture's entries of FAMILIES")
    ap.add_argument("-o", "--out", help="trimmed copy (with --keep)")
    a = ap.parse_args()
    if a.drop_classes and a.keep is None:
        raise SystemExit("--drop-classes needs --keep")
    unzstd = None
    if a.drop_classes:
        try:
            import zstandard
        except ImportError:
            raise SystemExit("--drop-classes reads compressed cubins: pip install zstandard")
        unzstd = zstandard.ZstdDecompressor()
    dropped = {}
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
        elif unzstd is not None and kind == 2 and data[off:off + 4] == ZSTD:
            cubin = unzstd.decompressobj().decompress(bytes(data[off:off + n]))
            fam = family(set(KERNEL.findall(cubin)))
            if fam is not None:
                data[off:off + n] = bytes(n)
                dropped[fam] = dropped.get(fam, 0) + n
    for key in sorted(sizes):
        print(f"{key}: {sizes[key] / 2**20:.1f} MiB")
    if a.keep is not None:
        if not sizes.get(f"sass sm_{a.keep}") and not sizes.get(f"ptx sm_{a.keep}"):
            raise SystemExit(f"no code for sm_{a.keep} to keep")
        if not a.out:
            raise SystemExit("--keep needs -o OUT")
        with open(a.out, "wb") as f:
            f.write(data)
        for fam in sorted(dropped):
            print(f"sm_{a.keep} {fam}: zeroed {dropped[fam] / 2**20:.1f} MiB")
        print(f"zeroed {zeroed / 2**20:.1f} MiB of other architectures; wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
