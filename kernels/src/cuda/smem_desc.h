// wgmma shared-memory matrix descriptors and the swizzle they share with TMA
// (PTX ISA, "Matrix Descriptor Format" and "Canonical Layouts"): pure
// functions for host and device, tested in tests/test_cuda_emu.cpp, decoded
// by the emulation (tests/emu/emu_sm90.cpp) to read wgmma operands.
#ifndef ATTNOPT_CUDA_SMEM_DESC_H_
#define ATTNOPT_CUDA_SMEM_DESC_H_

#include <stdint.h>

#ifdef __CUDACC__
#define ATTNOPT_DESC_HD __host__ __device__
#else
#define ATTNOPT_DESC_HD
#endif

namespace attnopt {
namespace cuda {

// The descriptor's 2-bit swizzle field.
enum class Swizzle : uint32_t { kNone = 0, k128B = 1, k64B = 2, k32B = 3 };

// Bytes of one swizzled row (the pattern repeats every 8 such rows).
ATTNOPT_DESC_HD constexpr uint32_t swizzle_bytes(Swizzle s) {
  return s == Swizzle::k128B ? 128u : s == Swizzle::k64B ? 64u : s == Swizzle::k32B ? 32u : 16u;
}

// Physical shared-memory byte address of logical address `addr`: the 16-byte
// chunk index within a row (bits 4..) XOR the row within the 8-row pattern
// (bits 7..), as many bits as the swizzle has (3, 2, 1 or none). Tiles
// aligned to 8 rows (1024 bytes for 128B) make this agree with the pattern
// relative to the tile, so the descriptors' base offset stays 0.
ATTNOPT_DESC_HD constexpr uint32_t swizzle_address(uint32_t addr, Swizzle s) {
  const uint32_t bits = s == Swizzle::k128B ? 3u : s == Swizzle::k64B ? 2u : s == Swizzle::k32B ? 1u : 0u;
  return addr ^ (((addr >> 7) & ((1u << bits) - 1u)) << 4);
}

// A descriptor's fields, in bytes (start is a shared-memory address).
struct SmemDesc {
  uint32_t start, lbo, sbo, base_offset;
  Swizzle swizzle;
};

// matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 for the three addresses.
ATTNOPT_DESC_HD constexpr uint64_t encode_smem_desc(const SmemDesc& d) {
  return static_cast<uint64_t>((d.start & 0x3FFFFu) >> 4) | static_cast<uint64_t>((d.lbo & 0x3FFFFu) >> 4) << 16 |
         static_cast<uint64_t>((d.sbo & 0x3FFFFu) >> 4) << 32 | static_cast<uint64_t>(d.base_offset & 7u) << 49 |
         static_cast<uint64_t>(d.swizzle) << 62;
}

ATTNOPT_DESC_HD constexpr SmemDesc decode_smem_desc(uint64_t x) {
  return SmemDesc{static_cast<uint32_t>(x & 0x3FFFu) << 4, static_cast<uint32_t>((x >> 16) & 0x3FFFu) << 4,
                  static_cast<uint32_t>((x >> 32) & 0x3FFFu) << 4, static_cast<uint32_t>((x >> 49) & 7u),
                  static_cast<Swizzle>((x >> 62) & 3u)};
}

// Logical byte address of element (mn, k) of a 16-bit operand described by
// d (before swizzle_address): K-major rows hold K contiguously, MN-major rows
// hold MN; the canonical layouts of the PTX ISA, with T = 8 elements (16 B):
//   K-major, swizzled: ((8,m),(T,2k)) : ((SW, SBO), (1, T))   SW = row bytes
//   K-major, none:     ((8,m),(T,2k)) : ((T, SBO), (1, LBO))
//   MN-major, swizzled: ((T,SW/16,m),(8,k)) : ((1, T, LBO), (SW, SBO))
//   MN-major, none:     ((T,1,m),(8,k)) : ((1, T, SBO), (T, LBO))
ATTNOPT_DESC_HD constexpr uint32_t operand_address(const SmemDesc& d, bool mn_major, uint32_t mn, uint32_t k) {
  const uint32_t sw = swizzle_bytes(d.swizzle);
  if (!mn_major) {
    if (d.swizzle == Swizzle::kNone)
      return d.start + (mn / 8) * d.sbo + (mn % 8) * 16 + (k / 8) * d.lbo + (k % 8) * 2;
    return d.start + (mn / 8) * d.sbo + (mn % 8) * sw + k * 2;
  }
  if (d.swizzle == Swizzle::kNone)
    return d.start + (mn / 8) * d.sbo + (mn % 8) * 2 + (k / 8) * d.lbo + (k % 8) * 16;
  return d.start + (mn / (sw / 2)) * d.lbo + (mn % (sw / 2)) * 2 + (k / 8) * d.sbo + (k % 8) * sw;
}

}  // namespace cuda
}  // namespace attnopt

#endif  // ATTNOPT_CUDA_SMEM_DESC_H_
