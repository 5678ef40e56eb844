// Host-side launchers of the CUDA kernels (called from launch.cu).
#ifndef ATTNOPT_CUDA_KERNELS_H_
#define ATTNOPT_CUDA_KERNELS_H_

#include <cuda_runtime.h>

#include "attnopt/attnopt.h"
#include "cuda/device_common.cuh"

namespace attnopt {
namespace cuda {

// Grid of a launch: x = query tiles (or windows x tiles), y = Hq, z = batch.
struct LaunchShape {
  int64_t batch, heads_q;
  int64_t segments;  // 1 for FlashAttention, number of windows otherwise
  int64_t rows;      // rows per segment (len_q, or the largest window)
};

// SIMT kernel: any GPU from sm_60, every dtype. Returns a CUDA error code.
cudaError_t launch_simt(attnopt_dtype dtype, bool window, KernelArgs args, const LaunchShape& shape,
                        cudaStream_t stream);

// Tensor-core kernel: sm_80+, f16/bf16. Returns cudaErrorNotSupported when the
// configuration does not fit (then the caller falls back to SIMT).
cudaError_t launch_mma(attnopt_dtype dtype, bool window, KernelArgs args, const LaunchShape& shape,
                       cudaStream_t stream);

// The literal pass for rows with no visible key (flash_rows.cu), after the
// attention kernel on the same stream; cudaSuccess without launching when p
// cannot have such rows.
cudaError_t launch_empty_rows(attnopt_dtype dtype, const KernelArgs& args, const attnopt_flash_params_v2& p,
                              cudaStream_t stream);
// Hopper kernel (flash_wgmma.cu, sm_90a): f16/bf16, Dqk = Dv 64 or 128, no
// mask, no softcap, TMA-addressable layouts, compute capability 9.0, where
// ATTNOPT_CUDA_HOPPER (or, unset, hopper_wanted's measured rule) wants it.
// cudaErrorNotSupported otherwise (the caller then
// takes launch_mma); also when the library was built without sm_90a.
cudaError_t launch_wgmma(attnopt_dtype dtype, bool window, const KernelArgs& args, const LaunchShape& shape,
                         cudaStream_t stream);

}  // namespace cuda
}  // namespace attnopt

// The Hopper path's micro-GEMM (wgmma_gemm.cu), checked against NumPy by the
// device lease script first: C (m x n, f32, row-major, device) = A (m x k,
// row-major) . B, B (n x k) row-major or, with b_mn_major, (k x n).
// ATTNOPT_ERR_UNSUPPORTED off compute capability 9.0 or without sm_90a.
extern "C" ATTNOPT_API int attnopt_cuda_wgmma_gemm_check(int dtype, const void* a, const void* b, float* c, int m,
                                                         int n, int k, int b_mn_major, void* stream);

#endif  // ATTNOPT_CUDA_KERNELS_H_
