// float64 reference for FlashAttention's rows with no visible key
// (attnopt_flash_params.empty_rows), written from docs/fully-masked-rows.md
// and sharing no code with the kernels: a row that sees a key is the plain
// softmax over the keys it sees; a row that sees none is the softmax over
// every key's literal score, computed as the source graph computes it. A
// NaN score makes its row NaN; keys a row does not admit are not read.
#ifndef ATTNOPT_TESTS_REFERENCE_ROWS_H_
#define ATTNOPT_TESTS_REFERENCE_ROWS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/numeric.h"
#include "reference.h"

namespace attnopt_test {

struct RowSemantics {
  int mode = ATTNOPT_EMPTY_ZERO;
  double mask_fill = -INFINITY, causal_fill = -INFINITY;
  bool once = false;
  attnopt_dtype round = ATTNOPT_F32;  // the type the source's Add ran in
  double mask_floor = -INFINITY;      // a float mask value <= it drops the key (mask_drop)
};

// The mask of one key: kind 0 none, 1 bool (keep), 2 float (value).
struct KeyMask {
  int kind;
  bool keep;
  double value;
};
using MaskAt = std::function<KeyMask(int64_t, int64_t, int64_t, int64_t)>;

inline double round_as(attnopt_dtype t, double x) {
  const float f = static_cast<float>(x);
  if (t == ATTNOPT_F16) return attnopt::half_to_float(attnopt::float_to_half(f));
  if (t == ATTNOPT_BF16) return attnopt::bf16_to_float(attnopt::float_to_bf16(f));
  return f;
}

// Output in contiguous (B, Hq, Nq, Dv) order.
inline std::vector<double> reference_rows(const RefDims& d, const Get4& q, const Get4& k, const Get4& v,
                                          double scale, const MaskAt& mask, bool causal, int64_t window,
                                          const RowSemantics& sem) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  std::vector<double> out(d.B * d.Hq * d.Nq * d.Dv, 0.0);
  std::vector<double> s(d.Nk);
  const int64_t group = d.Hq / d.Hkv, off = d.Nk - d.Nq;
  const double floor =
      std::max(causal && std::isfinite(sem.causal_fill) ? sem.causal_fill / 2 : kNegInf, sem.mask_floor);
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t h = 0; h < d.Hq; ++h)
      for (int64_t i = 0; i < d.Nq; ++i) {
        const int64_t hk = h / group;
        auto admitted = [&](int64_t j) { return !causal || (j <= i + off && (window <= 0 || j > i + off - window)); };
        auto dot = [&](int64_t j) {
          double x = 0;
          for (int64_t c = 0; c < d.Dqk; ++c) x += q(b, h, i, c) * k(b, hk, j, c);
          return x * scale;
        };
        bool sees = false;
        for (int64_t j = 0; j < d.Nk; ++j) {
          const KeyMask m = mask ? mask(b, h, i, j) : KeyMask{0, true, 0};
          sees |= admitted(j) && (m.kind == 1 ? m.keep : m.kind == 2 ? m.value > floor : true);
        }
        double mx = kNegInf;
        bool nan = false;  // a NaN score: softmax's row is NaN
        const bool literal = !sees && sem.mode != ATTNOPT_EMPTY_ZERO;
        for (int64_t j = 0; j < d.Nk; ++j) {
          const KeyMask m = mask ? mask(b, h, i, j) : KeyMask{0, true, 0};
          double x;
          if (!literal) {
            const bool in = admitted(j) && !(m.kind == 1 && !m.keep);
            x = in ? dot(j) + (m.kind == 2 ? m.value : 0.0) : kNegInf;
          } else {
            double term = m.kind == 1 ? (m.keep ? 0.0 : sem.mask_fill) : m.kind == 2 ? m.value : 0.0;
            if (!admitted(j)) {
              term = sem.once ? std::min(term, sem.causal_fill) : static_cast<double>(static_cast<float>(term) + static_cast<float>(sem.causal_fill));
            }
            x = round_as(sem.round, round_as(sem.round, dot(j)) + term);
          }
          s[j] = x;
          if (x > mx) mx = x;
          nan |= std::isnan(x);
        }
        double* o = &out[((b * d.Hq + h) * d.Nq + i) * d.Dv];
        if (nan) {
          for (int64_t c = 0; c < d.Dv; ++c) o[c] = NAN;
          continue;
        }
        if (mx == kNegInf) {
          const double fill = literal && sem.mode == ATTNOPT_EMPTY_LITERAL ? NAN : 0.0;
          for (int64_t c = 0; c < d.Dv; ++c) o[c] = fill;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j < d.Nk; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < d.Nk; ++j)
          for (int64_t c = 0; c < d.Dv; ++c) o[c] += s[j] / sum * v(b, hk, j, c);
      }
  return out;
}

}  // namespace attnopt_test

#endif  // ATTNOPT_TESTS_REFERENCE_ROWS_H_
