// CPU stand-in for cuda_fp16.h (emulation test only).
#ifndef ATTNOPT_EMU_CUDA_FP16_H_
#define ATTNOPT_EMU_CUDA_FP16_H_

#include <cstdint>

#include "common/numeric.h"

struct __half {
  uint16_t bits;
};
struct __half2 {
  __half x, y;  // x is the low 16 bits
};
inline float __half2float(__half h) { return attnopt::half_to_float(h.bits); }
inline __half __float2half_rn(float f) { return {attnopt::float_to_half(f)}; }
inline __half2 __floats2half2_rn(float lo, float hi) { return {__float2half_rn(lo), __float2half_rn(hi)}; }

#endif  // ATTNOPT_EMU_CUDA_FP16_H_
