// The sm_80 PTX the tensor-core kernel uses: cp.async, ldmatrix, mma.sync, ex2.approx.
// Under ATTNOPT_CUDA_EMULATION (tests/emu) the same names come from a CPU
// emulation that follows the PTX ISA's fragment layouts, so the kernel source
// itself can be run and checked on a machine without a GPU.
#ifndef ATTNOPT_CUDA_PTX_CUH_
#define ATTNOPT_CUDA_PTX_CUH_

#include <stdint.h>

#include <cstring>
#include <type_traits>

#ifdef ATTNOPT_CUDA_EMULATION
#include "emu_ptx.h"
#elif !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // no sm_80 PTX in older targets

namespace attnopt {
namespace cuda {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
// 2^x in one MUFU.EX2 (max relative error about 2^-22; subnormal results
// flush to 0, harmless for softmax weights relative to a maximum of 1);
// exp2f adds range scaling for subnormals on every call.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }
// cp.async.wait_group N takes an immediate: N up to 5 (a 3-stage K/V ring).
__device__ __forceinline__ void cp_async_wait(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::); break;
    default: asm volatile("cp.async.wait_group 5;\n" ::); break;
  }
}

// Four 8x8 b16 matrices; lanes 8m..8m+7 give the row addresses of matrix m,
// and lane l receives row l/4, columns 2(l%4), 2(l%4)+1 of each.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
// The same, each matrix transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* smem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// D += A(16x16, row) * B(16x8, col), fp32 accumulators; T is __half or __nv_bfloat16.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same<T, __half>::value) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace cuda
}  // namespace attnopt

#endif  // ATTNOPT_CUDA_EMULATION / sm_80

#if defined(ATTNOPT_CUDA_EMULATION) || !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace attnopt {
namespace cuda {
// Two floats as one 32-bit register of T (half or bfloat16), lo in the
// lower half: a P fragment of the tensor-core kernels (flash_mma.cu,
// flash_wgmma.cu).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t r;
  if constexpr (std::is_same<T, __half>::value) {
    const __half2 h = __floats2half2_rn(lo, hi);
    memcpy(&r, &h, sizeof(r));  // a bit copy, free of aliasing rules
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    memcpy(&r, &h, sizeof(r));
  }
  return r;
}
}  // namespace cuda
}  // namespace attnopt
#endif
#endif  // ATTNOPT_CUDA_PTX_CUH_
