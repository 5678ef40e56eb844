// Overflow-checked int64 arithmetic for the argument checks. Every product,
// extent and count that a model or caller chooses goes through these, so a
// value that would wrap (and then pass an equality test, or size a buffer
// too small) is refused instead.
#ifndef ATTNOPT_COMMON_CHECKED_H_
#define ATTNOPT_COMMON_CHECKED_H_

#include <cstdint>

namespace attnopt {

constexpr int64_t kInt64Max = INT64_MAX;

// *out = a * b for a, b >= 0; false when either is negative or the product
// exceeds limit.
inline bool mul_within(int64_t a, int64_t b, int64_t limit, int64_t* out) {
  if (a < 0 || b < 0) return false;
  if (a != 0 && b > limit / a) return false;
  *out = a * b;
  return true;
}

// *out = a + b for a, b >= 0; false when either is negative or the sum
// exceeds limit.
inline bool add_within(int64_t a, int64_t b, int64_t limit, int64_t* out) {
  if (a < 0 || b < 0 || a > limit || b > limit - a) return false;
  *out = a + b;
  return true;
}

// The product of n extents (each >= 0), every partial product checked
// against limit; false on a negative extent or when a partial product
// exceeds limit.
inline bool product_within(const int64_t* v, int n, int64_t limit, int64_t* out) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i)
    if (!mul_within(p, v[i], limit, &p)) return false;
  *out = p;
  return true;
}

// ceil(g / w) for g >= 0, w >= 1, written so that it cannot overflow.
inline int64_t ceil_div(int64_t g, int64_t w) { return g / w + (g % w != 0); }

// Whether a strided operand of these extents is addressable: the largest
// element offset, sum of (extent - 1) * |stride|, fits in an int64. An
// operand with an empty axis is never addressed and always passes.
inline bool extent_fits(const int64_t extent[4], const int64_t stride[4]) {
  for (int a = 0; a < 4; ++a)
    if (extent[a] == 0) return true;
  int64_t total = 0;
  for (int a = 0; a < 4; ++a) {
    if (extent[a] < 0 || stride[a] == INT64_MIN) return false;
    const int64_t s = stride[a] < 0 ? -stride[a] : stride[a];
    int64_t span = 0;
    if (!mul_within(extent[a] - 1, s, kInt64Max, &span) || !add_within(total, span, kInt64Max, &total)) return false;
  }
  return true;
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_CHECKED_H_
