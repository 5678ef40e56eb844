// CPU emulation of the sm_80 PTX used by the tensor-core kernel, written from
// the PTX ISA's definitions: warp-collective ldmatrix (x4, optional .trans)
// and mma.sync.m16n8k16 (row.col, f16/bf16 inputs, f32 accumulators);
// cp.async copies land only at the cp.async.wait_group that covers their
// commit group, and their destination holds NaN bytes from the issue until
// then, so a missing or too-weak wait, or a copy into a buffer other warps
// are still reading, shows up as NaN outputs.
#ifndef ATTNOPT_EMU_PTX_H_
#define ATTNOPT_EMU_PTX_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "cuda_bf16.h"
#include "cuda_fp16.h"

namespace attnopt_emu {
void ldmatrix_x4(uint32_t (&r)[4], const void* row_address, bool trans);
void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, bool bf16);
void cp_async(void* smem, const void* gmem, unsigned bytes);
void cp_async_commit();
void cp_async_wait(int pending);
}  // namespace attnopt_emu

namespace attnopt {
namespace cuda {

// Real cp.async of 16 bytes faults on addresses that are not 16-byte aligned.
inline void cp_async16(void* smem, const void* gmem) {
  if (reinterpret_cast<uintptr_t>(smem) % 16 || reinterpret_cast<uintptr_t>(gmem) % 16) {
    std::fprintf(stderr, "emulation: misaligned cp.async %p <- %p\n", smem, gmem);
    std::abort();
  }
  attnopt_emu::cp_async(smem, gmem, 16);
}
inline float fast_exp2(float x) { return std::exp2(x); }
inline void cp_async_commit() { attnopt_emu::cp_async_commit(); }
inline void cp_async_wait_all() { attnopt_emu::cp_async_wait(0); }
// cp.async.wait_group takes an immediate: the kernels pass small constants.
inline void cp_async_wait(int pending) { attnopt_emu::cp_async_wait(pending); }
inline void ldmatrix_x4(uint32_t (&r)[4], const void* smem) { attnopt_emu::ldmatrix_x4(r, smem, false); }
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem) { attnopt_emu::ldmatrix_x4(r, smem, true); }
template <typename T>
inline void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  attnopt_emu::mma16816(d, a, b0, b1, std::is_same<T, __nv_bfloat16>::value);
}

}  // namespace cuda
}  // namespace attnopt

#endif  // ATTNOPT_EMU_PTX_H_
