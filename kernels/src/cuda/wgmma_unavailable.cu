// Stand-ins for the Hopper path when the library is built without its sm_90a
// object (no 90 in CMAKE_CUDA_ARCHITECTURES, or ATTNOPT_CUDA_HOPPER=OFF):
// launch.cu then always takes the other kernels.
#include "cuda/kernels.h"

namespace attnopt {
namespace cuda {

cudaError_t launch_wgmma(attnopt_dtype, bool, const KernelArgs&, const LaunchShape&, cudaStream_t) {
  return cudaErrorNotSupported;
}

}  // namespace cuda
}  // namespace attnopt

extern "C" ATTNOPT_API int attnopt_cuda_wgmma_gemm_check(int, const void*, const void*, float*, int, int, int, int,
                                                         void*) {
  return ATTNOPT_ERR_UNSUPPORTED;
}
