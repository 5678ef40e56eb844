// Rows with no visible key (attnopt_flash_params.empty_rows,
// docs/fully-masked-rows.md): which keys a query sees, and the literal score
// the source graph gave every key of a row that sees none. Shared by the CPU
// pass (src/cpu/empty_rows.cpp) and the CUDA one (src/cuda/flash_rows.cu) so
// both decide the same rows the same way.
#ifndef ATTNOPT_COMMON_EMPTY_ROWS_H_
#define ATTNOPT_COMMON_EMPTY_ROWS_H_

#include <math.h>
#include <stdint.h>

#include "attnopt/attnopt.h"
#include "common/band.h"

#if defined(__CUDACC__)
#define ATTNOPT_ROWS_FN __host__ __device__ __forceinline__
#else
#define ATTNOPT_ROWS_FN inline
#endif

namespace attnopt {

struct EmptyRows {
  int mode;               // attnopt_empty_rows
  float mask_fill;        // a dropped bool key's term
  float causal_fill;      // a causal/window-dropped key's term
  bool once;              // both terms combine by min, not sum
  float float_floor;      // a float mask value <= this hides the key
  Band band;              // the window clamped to Nk by the entry points (common/params.h)
};

// The fix-up pass can change a row only when it may see no key: some mask,
// or causal rows above the first key (Nq > Nk).
ATTNOPT_ROWS_FN bool empty_rows_possible(const attnopt_flash_params_v2& p) {
  if (p.empty_rows == ATTNOPT_EMPTY_ZERO) return false;
  return p.mask_type != ATTNOPT_MASK_NONE || (p.causal && p.qkv.len_q > p.qkv.len_k) || p.qkv.len_k == 0;
}

ATTNOPT_ROWS_FN EmptyRows empty_rows_of(const attnopt_flash_params_v2& p) {
  EmptyRows e;
  e.mode = p.empty_rows;
  e.mask_fill = p.mask_fill;
  e.causal_fill = p.causal_fill;
  e.once = p.fill_once != 0;
  e.band = band_of(p);
  // With a finite causal fill the keys causal skips still count for a row
  // whose float-masked keys all score near that fill; such a row is
  // recomputed literally. Elsewhere they add exp(fill/2 - ...) = 0.
  e.float_floor = (e.band.causal && isfinite(p.causal_fill)) ? 0.5f * p.causal_fill : -INFINITY;
  // A float mask's own finite fill (mask_drop): a row whose keys all sit at
  // or below it is the source's literal row, rounded as the source rounds
  // it; the tiles' log2-scaled scores round a fill of 1e6 differently.
  if (p.mask_drop > 0.0f && -p.mask_drop > e.float_floor) e.float_floor = -p.mask_drop;
  return e;
}

// Whether key j is visible given its mask element: value is the additive
// form (bool false = -inf).
ATTNOPT_ROWS_FN bool visible(const EmptyRows& e, int mask_type, float value, int64_t i, int64_t j) {
  if (!e.band.admits(i, j)) return false;
  if (mask_type == ATTNOPT_MASK_BOOL) return value == 0.0f;
  if (mask_type != ATTNOPT_MASK_NONE) return value > e.float_floor;
  return true;
}

// The term the source added to key j's scaled score: the mask's (0 or
// mask_fill for bool, its value for float), and causal_fill where causal or
// the window drops the key (once: the smaller of the two).
ATTNOPT_ROWS_FN float literal_term(const EmptyRows& e, int mask_type, float value, int64_t i, int64_t j) {
  float m = value;
  if (mask_type == ATTNOPT_MASK_BOOL) m = value == 0.0f ? 0.0f : e.mask_fill;
  if (e.band.admits(i, j)) return m;
  return e.once ? fminf(m, e.causal_fill) : m + e.causal_fill;
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_EMPTY_ROWS_H_
