// CPU stand-in for cuda_bf16.h (emulation test only).
#ifndef ATTNOPT_EMU_CUDA_BF16_H_
#define ATTNOPT_EMU_CUDA_BF16_H_

#include <cstdint>

#include "common/numeric.h"

struct __nv_bfloat16 {
  uint16_t bits;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;  // x is the low 16 bits
};
inline float __bfloat162float(__nv_bfloat16 h) { return attnopt::bf16_to_float(h.bits); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return {attnopt::float_to_bf16(f)}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) {
  return {__float2bfloat16_rn(lo), __float2bfloat16_rn(hi)};
}

#endif  // ATTNOPT_EMU_CUDA_BF16_H_
