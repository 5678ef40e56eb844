// The CPU attention kernel shared by FlashAttention and WindowAttention: a
// chunk of query rows of one (batch, kv head) against a list of key tokens,
// tiled over keys with an online softmax, so memory is O(chunk * tile).
// The tile code (tile_kernels.inc) is compiled once per instruction set and
// picked at run time (cpu_isa.h).
#ifndef ATTNOPT_CPU_ATTENTION_CORE_H_
#define ATTNOPT_CPU_ATTENTION_CORE_H_

#include <cstdint>
#include <memory>

#include "attnopt/attnopt.h"
#include "common/band.h"

namespace attnopt {

constexpr int64_t kCpuBlockQ = 256;  // query rows per work item (a chunk)
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
  attnopt::Band band;     // causal and the sliding window (common/band.h)
  float softcap;          // > 0: scaled scores s become softcap * tanh(s / softcap) before the mask
};

// The part of a CoreProblem both ops fill the same way: operands, sizes
// and scale, no mask and no band (the one conversion of the C ABI's shared
// part, attnopt_qkv).
inline CoreProblem core_of(const attnopt_qkv& s, float scale) {
  CoreProblem c{};
  c.dtype = s.dtype;
  c.q = {s.q.data, {s.q.stride[0], s.q.stride[1], s.q.stride[2], s.q.stride[3]}};
  c.k = {s.k.data, {s.k.stride[0], s.k.stride[1], s.k.stride[2], s.k.stride[3]}};
  c.v = {s.v.data, {s.v.stride[0], s.v.stride[1], s.v.stride[2], s.v.stride[3]}};
  c.o = s.o;
  for (int i = 0; i < 4; ++i) c.os[i] = s.o_stride[i];
  c.dqk = s.dim_qk;
  c.dv = s.dim_v;
  c.scale = scale;
  c.mask_type = ATTNOPT_MASK_NONE;
  return c;
}

// Token positions: idx[i] when idx is set, else first + i (a dense range).
struct TokenSpan {
  const int64_t* idx;
  int64_t first;
  int64_t count;
  int64_t at(int64_t i) const { return idx ? idx[i] : first + i; }
};

// The rows of a chunk: `heads` consecutive query heads from hq (all reading
// kv head hkv) times the query tokens, head-major: row i is head
// hq + i / queries.count, token queries.at(i % queries.count). At most
// kCpuBlockQ rows. Several heads per chunk let the query heads of a GQA group
// share one pass over K and V when there are few queries (decoding).
struct ChunkRows {
  int64_t b, hq, heads, hkv;
  TokenSpan queries;
  int64_t count() const { return heads * queries.count; }
};

// A key split's unnormalised result for the rows of a chunk (split-K): row i
// at o + i * dv (sum of p * v), m[i] its running max (log2 units) and l[i]
// its sum of p. merge_splits (split_merge.h) combines the splits of a row.
struct PartialRows {
  float* o;
  float* m;
  float* l;
};

// Per worker scratch of one call: the packed key tiles of the last (b, hkv,
// keys) are kept so the next chunk of the same kv head reuses them, and the
// mask bits of the last chunk's queries so the next head's chunk of the same
// queries reuses them (one call only: the data may change between calls).
// Allocated only when a call's chunks share them (ChunkOptions).
struct CoreScratch {
  std::unique_ptr<float[]> packed;
  int64_t packed_size = 0;
  int64_t packed_tiles = 0;
  int64_t key_b = -1, key_h = -1, key_first = -1, key_count = -1;
  const int64_t* key_idx = nullptr;
  std::unique_ptr<uint64_t[]> bits;
  int64_t bits_size = 0;
  int64_t bits_b = -1, bits_q0 = -1, bits_count = -1;
};

struct ChunkOptions {
  // Other chunks of this call read the same keys: packed tiles are kept in
  // scratch for them.
  bool reuse_keys = false;
  // Every tile of (b, hkv, keys) already packed (pack_key_tiles), shared by
  // all threads.
  const float* prepacked = nullptr;
  // A bool mask with no head axis, whose bits of these queries other heads'
  // chunks will read: kept in scratch.
  bool reuse_mask_bits = false;
  // Write the rows' unnormalised partial results here instead of output rows.
  const PartialRows* partial = nullptr;
};

// Attends the rows to the keys (of kv head rows.hkv) and writes their output
// rows (or partial results). Causal and mask apply to token positions, so
// they are only meaningful with dense spans (FlashAttention).
void attend_block(const CoreProblem& p, const ChunkRows& rows, TokenSpan keys, const ChunkOptions& opts,
                  CoreScratch& scratch);

// Floats of the packed tiles of nkeys keys (a multiple of 16, so consecutive
// heads' tiles stay 64-byte aligned).
int64_t packed_key_floats(const CoreProblem& p, int64_t nkeys);
// Packs tiles [t0, t1) of (b, hkv, keys) into dst (64-byte aligned, room for
// packed_key_floats(p, keys.count)).
void pack_key_tiles(const CoreProblem& p, int64_t b, int64_t hkv, TokenSpan keys, int64_t t0, int64_t t1,
                    float* dst);

// Largest packed key-tile cache, in floats (default 64 MiB worth): per thread,
// or shared by a call's threads when packed before its chunks; above it every
// chunk packs its own tiles. A test hook for that path.
void cpu_set_packed_budget(int64_t floats);
int64_t cpu_packed_budget();

// Row conversions to and from float for the I/O types (portable code, used
// by every instruction-set variant for strided rows and the split merge).
void load_row(attnopt_dtype t, const void* base, int64_t off, int64_t n, int64_t stride, float* dst);
void store_row(attnopt_dtype t, void* base, int64_t off, int64_t n, int64_t stride, const float* src);
// Additive form of n mask elements (bool false -> -inf, true -> 0).
void load_mask_row(attnopt_mask_type t, const void* mask, int64_t off, int64_t n, int64_t stride,
                   float* dst);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_ATTENTION_CORE_H_
