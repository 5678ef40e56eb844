// The literal pass for rows with no visible key (src/common/empty_rows.h):
// after the tiles, every row that sees no key is recomputed over all keys
// with the fills the source graph used, so a fully masked row gives what the
// original gives (the mean of V under a finite fill, NaN under -inf) rather
// than the tiles' zeros. Rows are found by scanning for a visible key, which
// stops at the first one: a row with keys costs what its leading padding
// costs, and the pass runs only when empty rows are possible at all.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/empty_rows.h"
#include "common/numeric.h"
#include "common/softcap.h"
#include "cpu/attention_core.h"
#include "cpu/empty_rows.h"
#include "cpu/thread_pool.h"

namespace attnopt {
namespace {

float round_to(attnopt_dtype t, float x) {
  switch (t) {
    case ATTNOPT_F16: return half_to_float(float_to_half(x));
    case ATTNOPT_BF16: return bf16_to_float(float_to_bf16(x));
    default: return x;
  }
}

struct RowScratch {
  std::vector<float> q, k, v, s, acc, mask;
};

// Mask elements of row i of (b, h) in additive form; none: zeros.
void mask_row(const attnopt_flash_params_v2& p, int64_t b, int64_t h, int64_t i, float* dst) {
  if (p.mask_type == ATTNOPT_MASK_NONE) {
    std::fill(dst, dst + p.qkv.len_k, 0.0f);
    return;
  }
  const int64_t off = b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2];
  load_mask_row(p.mask_type, p.mask, off, p.qkv.len_k, p.mask_stride[3], dst);
}

// Whether row i sees some key; stops at the first one it sees.
bool sees_a_key(const attnopt_flash_params_v2& p, const EmptyRows& e, int64_t b, int64_t h, int64_t i) {
  const int64_t off = b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2];
  float m = 0.0f;
  int64_t lo, hi;
  e.band.key_range(i, i, p.qkv.len_k, &lo, &hi);
  for (int64_t j = lo; j < hi; ++j) {
    if (p.mask_type != ATTNOPT_MASK_NONE) load_mask_row(p.mask_type, p.mask, off + j * p.mask_stride[3], 1, 1, &m);
    if (visible(e, p.mask_type, m, i, j)) return true;
  }
  return false;
}

void literal_row(const attnopt_flash_params_v2& p, const EmptyRows& e, int64_t b, int64_t h, int64_t i,
                 RowScratch& r) {
  const int64_t hk = h / (p.qkv.heads_q / p.qkv.heads_kv);
  const int64_t nk = p.qkv.len_k;
  load_row(p.qkv.dtype, p.qkv.q.data, b * p.qkv.q.stride[0] + h * p.qkv.q.stride[1] + i * p.qkv.q.stride[2], p.qkv.dim_qk,
           p.qkv.q.stride[3], r.q.data());
  float mx = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t j = 0; j < nk; ++j) {
    load_row(p.qkv.dtype, p.qkv.k.data, b * p.qkv.k.stride[0] + hk * p.qkv.k.stride[1] + j * p.qkv.k.stride[2], p.qkv.dim_qk,
             p.qkv.k.stride[3], r.k.data());
    float dot = 0;
    for (int64_t c = 0; c < p.qkv.dim_qk; ++c) dot += r.q[c] * r.k[c];
    float x = dot * p.scale;
    if (p.softcap > 0.0f) x = softcap_value(x, p.softcap);  // before the mask terms
    const float s = round_to(p.fill_dtype, x);
    const float a = round_to(p.fill_dtype, s + literal_term(e, p.mask_type, r.mask[j], i, j));
    r.s[j] = a;
    mx = std::max(mx, a);  // NaN scores stay out of the max ...
    nan |= std::isnan(a);  // ... and make the row NaN (docs/ops.md "NaN")
  }
  std::fill(r.acc.begin(), r.acc.end(), 0.0);
  const bool none = mx == -std::numeric_limits<float>::infinity();
  if (none || nan) {
    // Every literal score is -inf: softmax gives 0/0 (NaN) unless the
    // source guarded such rows (a guard tests -inf, so NaN stays NaN).
    const float fill = e.mode == ATTNOPT_EMPTY_LITERAL_ZERO && !nan ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    std::fill(r.acc.begin(), r.acc.end(), fill);
  } else {
    double sum = 0;
    for (int64_t j = 0; j < nk; ++j) {
      const double w = std::exp(static_cast<double>(r.s[j]) - mx);
      if (!(w > 0)) continue;
      sum += w;
      load_row(p.qkv.dtype, p.qkv.v.data, b * p.qkv.v.stride[0] + hk * p.qkv.v.stride[1] + j * p.qkv.v.stride[2], p.qkv.dim_v,
               p.qkv.v.stride[3], r.v.data());
      for (int64_t c = 0; c < p.qkv.dim_v; ++c) r.acc[c] += static_cast<float>(w) * r.v[c];
    }
    for (int64_t c = 0; c < p.qkv.dim_v; ++c) r.acc[c] = static_cast<float>(r.acc[c] / sum);
  }
  store_row(p.qkv.dtype, p.qkv.o, b * p.qkv.o_stride[0] + h * p.qkv.o_stride[1] + i * p.qkv.o_stride[2], p.qkv.dim_v, p.qkv.o_stride[3],
            r.acc.data());
}

}  // namespace

void fix_empty_rows(const attnopt_flash_params_v2& p) {
  if (!empty_rows_possible(p)) return;
  const EmptyRows e = empty_rows_of(p);
  const int64_t qblocks = (p.qkv.len_q + kCpuBlockQ - 1) / kCpuBlockQ;
  std::vector<RowScratch> scratch;
  parallel_for(
      p.qkv.batch * p.qkv.heads_q * qblocks,
      [&](int64_t item, int worker) {
        RowScratch& r = scratch[worker];
        if (r.mask.empty()) {
          r.q.resize(p.qkv.dim_qk);
          r.k.resize(p.qkv.dim_qk);
          r.v.resize(p.qkv.dim_v);
          r.acc.resize(p.qkv.dim_v);
          r.s.resize(p.qkv.len_k + 1);
          r.mask.resize(p.qkv.len_k + 1);
        }
        const int64_t qb = item % qblocks;
        const int64_t h = (item / qblocks) % p.qkv.heads_q;
        const int64_t b = item / (qblocks * p.qkv.heads_q);
        const int64_t end = std::min(p.qkv.len_q, (qb + 1) * kCpuBlockQ);
        for (int64_t i = qb * kCpuBlockQ; i < end; ++i) {
          if (sees_a_key(p, e, b, h, i)) continue;
          mask_row(p, b, h, i, r.mask.data());
          literal_row(p, e, b, h, i, r);
        }
      },
      [&](int workers) { scratch.resize(workers); });
}

}  // namespace attnopt
