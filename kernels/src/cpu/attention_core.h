// The CPU attention kernel shared by FlashAttention and WindowAttention: a
// chunk of query tokens of one (batch, head) against a list of key tokens,
// tiled over keys with an online softmax, so memory is O(chunk * tile).
// The tile code (tile_kernels.inc) is compiled once per instruction set and
// picked at run time (cpu_isa.h).
#ifndef ATTNOPT_CPU_ATTENTION_CORE_H_
#define ATTNOPT_CPU_ATTENTION_CORE_H_

#include <cstdint>
#include <vector>

#include "attnopt/attnopt.h"

namespace attnopt {

constexpr int64_t kCpuBlockQ = 128;  // query rows per work item (a chunk)
constexpr int64_t kCpuBlockK = 64;   // keys per tile

struct Operand {
  const void* data;
  int64_t s[4];  // strides (b, h, n, d) in elements
};

struct CoreProblem {
  attnopt_dtype dtype;
  Operand q, k, v;
  void* o;
  int64_t os[4];
  int64_t dqk, dv;
  float scale;
  attnopt_mask_type mask_type;  // NONE for WindowAttention
  const void* mask;
  int64_t ms[4];
  bool causal;
  int64_t causal_offset;  // Nk - Nq: query i sees keys j <= i + offset
  int64_t window;         // > 0: and keys j > i + offset - window only
};

// Token positions: idx[i] when idx is set, else first + i (a dense range).
struct TokenSpan {
  const int64_t* idx;
  int64_t first;
  int64_t count;
  int64_t at(int64_t i) const { return idx ? idx[i] : first + i; }
};

// Per-thread scratch of one call, sized on first use and reused across its
// work items. The packed key tiles of the last (b, hkv, keys) are kept so the
// next query chunk of the same head reuses them (one call only: the data may
// change between calls).
struct CoreScratch {
  std::vector<float> buf;
  std::vector<float> packed;
  int64_t packed_tiles = 0;
  int64_t key_b = -1, key_h = -1, key_first = -1, key_count = -1;
  const int64_t* key_idx = nullptr;
};

// Attends queries (count <= kCpuBlockQ) of query head hq to keys of kv head
// hkv in batch b and writes their output rows. Causal and mask apply to token
// positions, so they are only meaningful with dense spans (FlashAttention).
void attend_block(const CoreProblem& p, int64_t b, int64_t hq, int64_t hkv, TokenSpan queries,
                  TokenSpan keys, CoreScratch& scratch);

// Largest packed key-tile cache per thread, in floats (default 64 MiB worth);
// above it every chunk packs its own tiles. A test hook for that path.
void cpu_set_packed_budget(int64_t floats);

// Row conversions to and from float for the I/O types (portable code, used
// by every instruction-set variant for Q rows, outputs and strided rows).
void load_row(attnopt_dtype t, const void* base, int64_t off, int64_t n, int64_t stride, float* dst);
void store_row(attnopt_dtype t, void* base, int64_t off, int64_t n, int64_t stride, const float* src);
// Additive form of n mask elements (bool false -> -inf, true -> 0).
void load_mask_row(attnopt_mask_type t, const void* mask, int64_t off, int64_t n, int64_t stride,
                   float* dst);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_ATTENTION_CORE_H_
