// Host side of TMA: 16-bit tensor maps with 128-byte swizzle through the
// driver's cuTensorMapEncodeTiled, reached with
// cudaGetDriverEntryPointByVersion, so the library never links libcuda.
#ifndef ATTNOPT_CUDA_TENSOR_MAP_H_
#define ATTNOPT_CUDA_TENSOR_MAP_H_

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda/ptx_sm90.cuh"
#ifndef ATTNOPT_CUDA_EMULATION
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#endif

namespace attnopt {
namespace cuda {

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
#if defined(ATTNOPT_CUDA_EMULATION) || CUDART_VERSION >= 12050
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
#else  // before 12.5: the unversioned query (deprecated since)
    const cudaError_t err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q);
#endif
    if (err != cudaSuccess || q != cudaDriverEntryPointSuccess) p = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A rank-`rank` tensor of f16/bf16: dims and element strides innermost
// first (strides[0] must be 1), boxes of `box`, 128-byte swizzle, zero fill
// out of range. False when TMA cannot address it (alignment, strides) or the
// driver has no encoder; the caller then takes another kernel.
inline bool make_tensor_map(CUtensorMap* map, bool bf16, int rank, const void* base, const int64_t* dims,
                            const int64_t* strides, const uint32_t* box) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (!encode || rank < 2 || rank > 5 || strides[0] != 1 || reinterpret_cast<uintptr_t>(base) % 16) return false;
  cuuint64_t gdim[5], gstride[4];
  cuuint32_t gbox[5], estride[5];
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 1 || dims[i] > (int64_t{1} << 31)) return false;
    gdim[i] = static_cast<cuuint64_t>(dims[i]);
    gbox[i] = box[i];
    estride[i] = 1;
  }
  for (int i = 1; i < rank; ++i) {
    // An axis of extent 1 is never stepped: its own stride (maybe 0) is
    // replaced by the packed one.
    const int64_t packed = (i == 1 ? 2 : static_cast<int64_t>(gstride[i - 2])) * static_cast<int64_t>(gdim[i - 1]);
    const int64_t bytes = dims[i] == 1 ? packed : strides[i] * 2;
    if (bytes <= 0 || bytes % 16 || bytes >= (int64_t{1} << 40)) return false;
    gstride[i - 1] = static_cast<cuuint64_t>(bytes);
  }
  return encode(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                static_cast<cuuint32_t>(rank), const_cast<void*>(base), gdim, gstride, gbox, estride,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Compute capability 9.0 exactly: sm_90a code runs on no other device.
inline bool device_is_sm90() {
  int dev = 0, major = 0, minor = 0;
  return cudaGetDevice(&dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess && major == 9 &&
         minor == 0;
}

}  // namespace cuda
}  // namespace attnopt

#endif  // ATTNOPT_CUDA_TENSOR_MAP_H_
