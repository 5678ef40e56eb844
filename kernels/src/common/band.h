// The causal band and its sliding window, stated once for every kernel
// (docs/ops.md, FlashAttention's `causal` and `sliding_window`): query i
// admits key j when j <= i + offset (offset = Nk - Nq, the last query sees
// the last key) and, with a window W > 0, also j > i + offset - W (its last
// W keys). The CPU tiles (src/cpu/tile_kernels.inc), the empty-row pass
// (common/empty_rows.h) and the CUDA kernels (src/cuda/) all ask this header.
#ifndef ATTNOPT_COMMON_BAND_H_
#define ATTNOPT_COMMON_BAND_H_

#include <stdint.h>

#include "attnopt/attnopt.h"

#if defined(__CUDACC__)
#define ATTNOPT_BAND_FN __host__ __device__ __forceinline__
#else
#define ATTNOPT_BAND_FN inline
#endif

namespace attnopt {

struct Band {
  bool causal;
  int64_t offset;  // Nk - Nq
  int64_t window;  // > 0 (with causal): only the last `window` keys of a row's band

  ATTNOPT_BAND_FN bool windowed() const { return causal && window > 0; }
  // One past the last key query i admits (causal), not clamped to [0, Nk].
  ATTNOPT_BAND_FN int64_t end(int64_t i) const { return i + offset + 1; }
  // The first key query i admits under the window, not clamped.
  ATTNOPT_BAND_FN int64_t begin(int64_t i) const { return i + offset - window + 1; }

  ATTNOPT_BAND_FN bool admits(int64_t i, int64_t j) const {
    return !causal || (j < end(i) && (window <= 0 || j >= begin(i)));
  }

  // The keys [*lo, *hi) of [0, nk) that some query of [q_lo, q_hi] admits
  // (both ends of the band rise with the query, so the first query bounds
  // the window's side and the last one causal's).
  ATTNOPT_BAND_FN void key_range(int64_t q_lo, int64_t q_hi, int64_t nk, int64_t* lo, int64_t* hi) const {
    *lo = 0;
    *hi = nk;
    if (!causal) return;
    const int64_t e = end(q_hi);
    *hi = e < 0 ? 0 : (e < nk ? e : nk);
    if (window > 0 && begin(q_lo) > 0) *lo = begin(q_lo) < *hi ? begin(q_lo) : *hi;
  }

  // Every query of [q_lo, q_hi] admits every key of [k_lo, k_hi]: a tile
  // needs no per-element band test.
  ATTNOPT_BAND_FN bool covers(int64_t q_lo, int64_t q_hi, int64_t k_lo, int64_t k_hi) const {
    return !causal || (k_hi < end(q_lo) && (window <= 0 || k_lo >= begin(q_hi)));
  }

  // No query of [q_lo, q_hi] admits any key of [k_lo, k_hi]: a tile to skip.
  ATTNOPT_BAND_FN bool misses(int64_t q_lo, int64_t q_hi, int64_t k_lo, int64_t k_hi) const {
    return causal && (k_lo >= end(q_hi) || (window > 0 && k_hi < begin(q_lo)));
  }
};

// The band of a FlashAttention call whose window the entry points clamped
// (common/params.h).
ATTNOPT_BAND_FN Band band_of(const attnopt_flash_params_v2& p) {
  Band b;
  b.causal = p.causal != 0;
  b.offset = p.qkv.len_k - p.qkv.len_q;
  b.window = b.causal ? p.window : 0;
  return b;
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_BAND_H_
