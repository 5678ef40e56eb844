// The CPU attention kernel shared by FlashAttention and WindowAttention: one
// block of query tokens of one (batch, head) against a list of key tokens,
// tiled over keys with an online softmax, so memory is O(block * tile).
#ifndef ATTNOPT_CPU_ATTENTION_CORE_H_
#define ATTNOPT_CPU_ATTENTION_CORE_H_

#include <cstdint>
#include <vector>

#include "attnopt/attnopt.h"

namespace attnopt {

constexpr int64_t kCpuBlockQ = 32;  // query rows per work item
constexpr int64_t kCpuBlockK = 64;  // keys per tile

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
};

// Token positions: idx[i] when idx is set, else first + i (a dense range).
struct TokenSpan {
  const int64_t* idx;
  int64_t first;
  int64_t count;
  int64_t at(int64_t i) const { return idx ? idx[i] : first + i; }
};

// Per-thread buffers, sized on first use and reused across work items.
struct CoreScratch {
  std::vector<float> q, k, v, s, acc, m, l;
};

// Attends queries (count <= kCpuBlockQ) of query head hq to keys of kv head
// hkv in batch b and writes their output rows. Causal and mask apply to token
// positions, so they are only meaningful with dense spans (FlashAttention).
void attend_block(const CoreProblem& p, int64_t b, int64_t hq, int64_t hkv, TokenSpan queries,
                  TokenSpan keys, CoreScratch& scratch);

}  // namespace attnopt

#endif  // ATTNOPT_CPU_ATTENTION_CORE_H_
