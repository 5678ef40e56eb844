// Small test harness: random tensors in any I/O dtype (with the exact values
// the kernel sees, for the reference), error metrics and check macros.
#ifndef ATTNOPT_TESTS_TEST_UTIL_H_
#define ATTNOPT_TESTS_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/numeric.h"

namespace attnopt_test {

extern int g_failures;

#define EXPECT_TRUE(cond, ...)                                       \
  do {                                                               \
    if (!(cond)) {                                                   \
      ++attnopt_test::g_failures;                                    \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                             \
      std::fprintf(stderr, "\n");                                    \
    }                                                                \
  } while (0)

inline const char* dtype_name(attnopt_dtype t) {
  return t == ATTNOPT_F32 ? "f32" : t == ATTNOPT_F16 ? "f16" : "bf16";
}

// Relative L2 error threshold per I/O dtype: the output rounding dominates.
inline double tolerance(attnopt_dtype t) {
  return t == ATTNOPT_F32 ? 2e-6 : t == ATTNOPT_F16 ? 1e-3 : 8e-3;
}

// A tensor stored in dtype t, plus the float value of every stored element.
struct Tensor {
  attnopt_dtype dtype = ATTNOPT_F32;
  std::vector<float> f32;     // storage when dtype is f32
  std::vector<uint16_t> h16;  // storage when dtype is f16/bf16
  std::vector<double> value;  // exact stored values, for the reference

  void* data() { return dtype == ATTNOPT_F32 ? static_cast<void*>(f32.data()) : h16.data(); }
  size_t size() const { return value.size(); }

  // Reads back element i as double (used for outputs).
  double get(size_t i) const {
    if (dtype == ATTNOPT_F32) return f32[i];
    return dtype == ATTNOPT_F16 ? attnopt::half_to_float(h16[i]) : attnopt::bf16_to_float(h16[i]);
  }

  // FNV-1a of the stored bits: the emulation prints it per case, so two
  // builds' outputs can be compared bit for bit (a refactor must not move one).
  uint64_t bits_hash() const {
    const unsigned char* b = dtype == ATTNOPT_F32 ? reinterpret_cast<const unsigned char*>(f32.data())
                                                  : reinterpret_cast<const unsigned char*>(h16.data());
    const size_t n = dtype == ATTNOPT_F32 ? f32.size() * 4 : h16.size() * 2;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
  }
};

inline Tensor make_tensor(attnopt_dtype t, size_t n, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor x;
  x.dtype = t;
  x.value.resize(n);
  if (t == ATTNOPT_F32) x.f32.resize(n); else x.h16.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    if (t == ATTNOPT_F32) {
      x.f32[i] = v;
      x.value[i] = v;
    } else if (t == ATTNOPT_F16) {
      x.h16[i] = attnopt::float_to_half(v);
      x.value[i] = attnopt::half_to_float(x.h16[i]);
    } else {
      x.h16[i] = attnopt::float_to_bf16(v);
      x.value[i] = attnopt::bf16_to_float(x.h16[i]);
    }
  }
  return x;
}

// Output buffer filled with NaN, so rows the kernel forgets to write fail.
inline Tensor make_poisoned(attnopt_dtype t, size_t n) {
  Tensor x;
  x.dtype = t;
  x.value.assign(n, 0.0);
  if (t == ATTNOPT_F32) x.f32.assign(n, std::nanf("")); else x.h16.assign(n, 0x7e00);
  return x;
}

// ||out - ref|| / ||ref||; any non-finite output gives +inf.
inline double rel_l2(const Tensor& out, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double o = out.get(i);
    if (!std::isfinite(o)) return INFINITY;
    num += (o - ref[i]) * (o - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline void contiguous_strides(int64_t h, int64_t n, int64_t d, int64_t s[4]) {
  s[3] = 1;
  s[2] = d;
  s[1] = n * d;
  s[0] = h * n * d;
}

}  // namespace attnopt_test

#endif  // ATTNOPT_TESTS_TEST_UTIL_H_
