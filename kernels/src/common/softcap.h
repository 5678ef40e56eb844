// The softcap of a scaled score s (FlashAttention's softcap attribute,
// c * tanh(s / c)), one definition for the CPU row pass (src/cpu/empty_rows.cpp)
// and the CUDA kernels (src/cuda/device_common.cuh); the CPU tiles' vector
// form is vsoftcap in src/cpu/tile_kernels.inc.
#ifndef ATTNOPT_COMMON_SOFTCAP_H_
#define ATTNOPT_COMMON_SOFTCAP_H_

#include <math.h>

#if defined(__CUDACC__)
#define ATTNOPT_SOFTCAP_FN __host__ __device__ __forceinline__
#else
#define ATTNOPT_SOFTCAP_FN inline
#endif

namespace attnopt {

// Accurate for every finite c > 0 (issue 34). Below |s / c| = 2^-12,
// tanh(y) = y (1 - y^2 / 3 + ...) rounds to y in float, so the result is s
// itself: this also covers c near FLT_MAX, where s / c is subnormal (or
// flushed to zero under -ftz) and c * tanh(s / c) lost s's digits or gave 0.
// Elsewhere |c * tanh(s / c)| <= |s| stays finite. A NaN s stays NaN.
ATTNOPT_SOFTCAP_FN float softcap_value(float s, float c) {
  const float y = s / c;
  return fabsf(y) < 0x1p-12f ? s : c * tanhf(y);
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_SOFTCAP_H_
