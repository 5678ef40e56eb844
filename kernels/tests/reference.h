// Plain float64 triple-loop references, written directly from the op
// definitions (no tiling, no shared code with the kernels).
#ifndef ATTNOPT_TESTS_REFERENCE_H_
#define ATTNOPT_TESTS_REFERENCE_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace attnopt_test {

// Element accessors in logical (b, h, n, d) order.
using Get4 = std::function<double(int64_t, int64_t, int64_t, int64_t)>;
// Additive mask value for (b, h, i, j): 0, finite, or -inf.
using Mask4 = std::function<double(int64_t, int64_t, int64_t, int64_t)>;
// Whether query token i may see key token j (besides the mask).
using Admit = std::function<bool(int64_t, int64_t)>;

struct RefDims {
  int64_t B, Hq, Hkv, Nq, Nk, Dqk, Dv;
};

// Output in contiguous (B, Hq, Nq, Dv) order. softcap > 0 caps the scaled
// score s at softcap * tanh(s / softcap) before the mask is added.
inline std::vector<double> reference_attention(const RefDims& d, const Get4& q, const Get4& k,
                                               const Get4& v, double scale, const Mask4& mask,
                                               const Admit& admit, double softcap = 0) {
  std::vector<double> out(d.B * d.Hq * d.Nq * d.Dv, 0.0);
  std::vector<double> s(d.Nk);
  const int64_t group = d.Hq / d.Hkv;
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t h = 0; h < d.Hq; ++h)
      for (int64_t i = 0; i < d.Nq; ++i) {
        const int64_t hk = h / group;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < d.Nk; ++j) {
          double x = -std::numeric_limits<double>::infinity();
          if (!admit || admit(i, j)) {
            double dot = 0;
            for (int64_t c = 0; c < d.Dqk; ++c) dot += q(b, h, i, c) * k(b, hk, j, c);
            x = dot * scale;
            if (softcap > 0) x = softcap * std::tanh(x / softcap);
            x += mask ? mask(b, h, i, j) : 0.0;
          }
          s[j] = x;
          mx = std::max(mx, x);
        }
        double* o = &out[((b * d.Hq + h) * d.Nq + i) * d.Dv];
        if (mx == -std::numeric_limits<double>::infinity()) continue;  // no key: zeros
        double sum = 0;
        for (int64_t j = 0; j < d.Nk; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < d.Nk; ++j)
          for (int64_t c = 0; c < d.Dv; ++c) o[c] += s[j] / sum * v(b, hk, j, c);
      }
  return out;
}

// Window id of a coordinate on one axis, straight from the op definition.
inline int64_t window_of(int64_t c, int64_t G, int64_t w, int64_t s) {
  const int64_t r = ((c - s) % G + G) % G;
  return r / w;
}

// Admit function for WindowAttention over a row-major grid. Shifts are
// reduced modulo the grid first, so any int64 shift (INT64_MIN included)
// is taken without overflow.
inline Admit window_admit(std::vector<int64_t> grid, std::vector<int64_t> win, std::vector<int64_t> shift) {
  for (size_t a = 0; a < grid.size(); ++a) shift[a] = (shift[a] % grid[a] + grid[a]) % grid[a];
  return [=](int64_t i, int64_t j) {
    for (int a = static_cast<int>(grid.size()) - 1; a >= 0; --a) {
      const int64_t ci = i % grid[a], cj = j % grid[a];
      if (window_of(ci, grid[a], win[a], shift[a]) != window_of(cj, grid[a], win[a], shift[a])) return false;
      i /= grid[a];
      j /= grid[a];
    }
    return true;
  };
}

}  // namespace attnopt_test

#endif  // ATTNOPT_TESTS_REFERENCE_H_
