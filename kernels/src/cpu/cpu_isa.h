// Run-time choice of the CPU tile kernels: one library runs on any x86-64 (or
// arm64) and uses AVX2+FMA or AVX-512 where the processor has them.
#ifndef ATTNOPT_CPU_CPU_ISA_H_
#define ATTNOPT_CPU_CPU_ISA_H_

#include <cstdint>

#include "cpu/attention_core.h"

namespace attnopt {

enum class CpuIsa { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

const char* cpu_isa_name(CpuIsa isa);

// The tile kernels of one instruction set (tile_kernels.inc).
struct TileKernels {
  CpuIsa isa;
  // Floats of scratch attend_chunk needs for these head dims.
  int64_t (*scratch_floats)(int64_t dqk, int64_t dv);
  // Floats of one packed key tile (K transposed, then V).
  int64_t (*tile_floats)(int64_t dqk, int64_t dv);
  // attend_block's work (see attention_core.h). packed, when not null, has room
  // (plus 16 floats for alignment) for every key tile of (b, hkv, keys):
  // *packed_tiles of them are already packed, the rest are packed on demand.
  // row_bits, when not null (bool masks only), holds mask_bits of these rows.
  void (*attend_chunk)(const CoreProblem& p, const ChunkRows& rows, TokenSpan keys, float* scratch,
                       float* packed, int64_t* packed_tiles, const uint64_t* row_bits, const PartialRows* partial);
  // Tiles [t0, t1) of (b, hkv, keys) as attend_chunk's packed tiles, tile t at
  // dst + t * tile_floats (dst 64-byte aligned).
  void (*pack_tiles)(const CoreProblem& p, int64_t b, int64_t hkv, TokenSpan keys, int64_t t0, int64_t t1,
                     float* dst);
  // A bool mask without a head axis as bits: per query of rows, one word per
  // key tile of keys (query i tile t at dst[i * tiles + t]).
  void (*mask_bits)(const CoreProblem& p, const ChunkRows& rows, TokenSpan keys, uint64_t* dst);
  // 2^x on n floats with the kernels' vector exp2 (tested on its own).
  void (*exp2_n)(const float* x, float* y, int64_t n);
};

// Whether this processor (and build) can run isa.
bool cpu_isa_supported(CpuIsa isa);
// The kernels in use: the best supported, or ATTNOPT_CPU_ISA=generic|avx2|avx512
// (capped to what is supported), or what cpu_isa_force chose.
const TileKernels& cpu_tile_kernels();
// Test hook: use isa from now on (ignored when unsupported); returns whether it took.
bool cpu_isa_force(CpuIsa isa);
// The kernels of one instruction set (nullptr when not built in).
const TileKernels* cpu_tile_kernels_for(CpuIsa isa);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_CPU_ISA_H_
