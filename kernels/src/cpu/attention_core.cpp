#include "cpu/attention_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/numeric.h"

namespace attnopt {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Converts n elements (stride sd) starting at element offset off to float.
void load_row(attnopt_dtype t, const void* base, int64_t off, int64_t n, int64_t sd, float* dst) {
  switch (t) {
    case ATTNOPT_F32: {
      const float* src = static_cast<const float*>(base) + off;
      if (sd == 1) {
        std::memcpy(dst, src, sizeof(float) * n);
      } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i * sd];
      }
      break;
    }
    case ATTNOPT_F16: {
      const uint16_t* src = static_cast<const uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i * sd]);
      break;
    }
    case ATTNOPT_BF16: {
      const uint16_t* src = static_cast<const uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_float(src[i * sd]);
      break;
    }
  }
}

void store_row(attnopt_dtype t, void* base, int64_t off, int64_t n, int64_t sd, const float* src) {
  switch (t) {
    case ATTNOPT_F32: {
      float* dst = static_cast<float*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i * sd] = src[i];
      break;
    }
    case ATTNOPT_F16: {
      uint16_t* dst = static_cast<uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i * sd] = float_to_half(src[i]);
      break;
    }
    case ATTNOPT_BF16: {
      uint16_t* dst = static_cast<uint16_t*>(base) + off;
      for (int64_t i = 0; i < n; ++i) dst[i * sd] = float_to_bf16(src[i]);
      break;
    }
  }
}

// Additive form of one mask element: bool false -> -inf, true -> 0.
inline float mask_value(attnopt_mask_type t, const void* mask, int64_t off) {
  switch (t) {
    case ATTNOPT_MASK_BOOL: return static_cast<const uint8_t*>(mask)[off] ? 0.0f : kNegInf;
    case ATTNOPT_MASK_F32: return static_cast<const float*>(mask)[off];
    case ATTNOPT_MASK_F16: return half_to_float(static_cast<const uint16_t*>(mask)[off]);
    case ATTNOPT_MASK_BF16: return bf16_to_float(static_cast<const uint16_t*>(mask)[off]);
    default: return 0.0f;
  }
}

inline float dot(const float* a, const float* b, int64_t n) {
  float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

}  // namespace

void attend_block(const CoreProblem& p, int64_t b, int64_t hq, int64_t hkv, TokenSpan queries,
                  TokenSpan keys, CoreScratch& sc) {
  const int64_t nq = queries.count, dqk = p.dqk, dv = p.dv;
  sc.q.resize(kCpuBlockQ * dqk);
  sc.k.resize(kCpuBlockK * dqk);
  sc.v.resize(kCpuBlockK * dv);
  sc.s.resize(kCpuBlockK);
  sc.acc.assign(kCpuBlockQ * dv, 0.0f);
  sc.m.assign(kCpuBlockQ, kNegInf);
  sc.l.assign(kCpuBlockQ, 0.0f);

  for (int64_t i = 0; i < nq; ++i)
    load_row(p.dtype, p.q.data, b * p.q.s[0] + hq * p.q.s[1] + queries.at(i) * p.q.s[2], dqk,
             p.q.s[3], &sc.q[i * dqk]);

  // With causal masking (dense spans only) keys past the last query's limit
  // are never admissible: stop the key loop there.
  int64_t nk = keys.count;
  if (p.causal) {
    int64_t last = queries.at(0);
    for (int64_t i = 1; i < nq; ++i) last = std::max(last, queries.at(i));
    nk = std::clamp<int64_t>(last + p.causal_offset + 1, 0, nk);
  }

  for (int64_t k0 = 0; k0 < nk; k0 += kCpuBlockK) {
    const int64_t kt = std::min(kCpuBlockK, nk - k0);
    for (int64_t j = 0; j < kt; ++j) {
      const int64_t tok = keys.at(k0 + j);
      load_row(p.dtype, p.k.data, b * p.k.s[0] + hkv * p.k.s[1] + tok * p.k.s[2], dqk, p.k.s[3],
               &sc.k[j * dqk]);
      load_row(p.dtype, p.v.data, b * p.v.s[0] + hkv * p.v.s[1] + tok * p.v.s[2], dv, p.v.s[3],
               &sc.v[j * dv]);
    }
    for (int64_t i = 0; i < nq; ++i) {
      const int64_t qtok = queries.at(i);
      const float* qi = &sc.q[i * dqk];
      float* s = sc.s.data();
      float tile_max = kNegInf;
      const int64_t mrow = b * p.ms[0] + hq * p.ms[1] + qtok * p.ms[2];
      for (int64_t j = 0; j < kt; ++j) {
        const int64_t ktok = keys.at(k0 + j);
        float x = dot(qi, &sc.k[j * dqk], dqk) * p.scale;
        if (p.mask_type != ATTNOPT_MASK_NONE) x += mask_value(p.mask_type, p.mask, mrow + ktok * p.ms[3]);
        if (p.causal && ktok > qtok + p.causal_offset) x = kNegInf;
        s[j] = x;
        tile_max = std::max(tile_max, x);
      }
      const float m_old = sc.m[i];
      const float m_new = std::max(m_old, tile_max);
      if (m_new == kNegInf) continue;  // nothing admissible yet in this row
      const float alpha = std::exp(m_old - m_new);  // 0 when m_old is -inf
      float* acc = &sc.acc[i * dv];
      float lsum = 0.0f;
      for (int64_t d = 0; d < dv; ++d) acc[d] *= alpha;
      for (int64_t j = 0; j < kt; ++j) {
        const float pj = std::exp(s[j] - m_new);  // exp(-inf) = 0 for masked keys
        if (pj == 0.0f) continue;
        lsum += pj;
        const float* vj = &sc.v[j * dv];
#pragma omp simd
        for (int64_t d = 0; d < dv; ++d) acc[d] += pj * vj[d];
      }
      sc.l[i] = sc.l[i] * alpha + lsum;
      sc.m[i] = m_new;
    }
  }

  for (int64_t i = 0; i < nq; ++i) {
    float* acc = &sc.acc[i * dv];
    const float l = sc.l[i];
    // A row that never saw an admissible key keeps l == 0: its output is 0.
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    for (int64_t d = 0; d < dv; ++d) acc[d] *= inv;
    store_row(p.dtype, p.o, b * p.os[0] + hq * p.os[1] + queries.at(i) * p.os[2], dv, p.os[3], acc);
  }
}

}  // namespace attnopt
