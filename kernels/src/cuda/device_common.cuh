// Device-side pieces shared by the SIMT and tensor-core kernels: element
// conversion, mask reads, and the mapping from a thread block to its query
// rows and key rows (a dense sequence for FlashAttention, one window of the
// grid for WindowAttention). Both kernels implement the same online softmax
// as the CPU core (src/cpu/attention_core.cpp).
#ifndef ATTNOPT_CUDA_DEVICE_COMMON_CUH_
#define ATTNOPT_CUDA_DEVICE_COMMON_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "common/band.h"
#include "common/softcap.h"
#include "common/window_geometry.h"

// Kernel launch and dynamic shared memory, spelled through macros so the
// CPU emulation (tests/emu) can run the same kernel source.
#ifdef ATTNOPT_CUDA_EMULATION
#define ATTNOPT_LAUNCH(kernel, grid, block, smem, stream, args) \
  ::attnopt_emu::launch(kernel, grid, block, smem, stream, args)
#define ATTNOPT_DYNAMIC_SMEM(type, name) type* name = static_cast<type*>(::attnopt_emu::dynamic_smem())
#else
#define ATTNOPT_LAUNCH(kernel, grid, block, smem, stream, args) kernel<<<grid, block, smem, stream>>>(args)
#define ATTNOPT_DYNAMIC_SMEM(type, name) extern __shared__ __align__(16) type name[]
#endif

namespace attnopt {
namespace cuda {

// Everything a kernel needs, passed by value (kernel parameter space).
struct KernelArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  int64_t qs[4], ks[4], vs[4], os[4];  // (b, h, n, d) strides in elements
  int64_t len_q, len_k;
  int dqk, dv;
  int group;  // Hq / Hkv
  float scale;
  int mask_type;  // attnopt_mask_type
  const void* mask;
  int64_t ms[4];
  Band band;              // causal and the sliding window (common/band.h); none for WindowAttention
  WindowGeometry geo;     // WindowAttention only
  int64_t tiles_per_window;
  // 16-byte vector loads are legal (tensor-core path): contiguous feature
  // axis, 8-element aligned strides and base, head dim a multiple of 8.
  int q_vec, k_vec, v_vec;
  // Bool mask rows can be read 8 bytes at a time: contiguous key axis,
  // 8-byte aligned base and strides (tensor-core path's mask bits).
  int mask_vec;
  int stages;  // tensor-core kernel: K/V tiles in flight (set by its launcher)
  float softcap;  // > 0: scaled scores s become softcap * tanhf(s / softcap) before the mask
};

// The softcap of a scaled score (FlashAttention's softcap attribute; common/softcap.h).
__device__ __forceinline__ float soft_cap(float s, float c) { return softcap_value(s, c); }

template <typename T> __device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Additive form of one mask element (bool false -> -inf), as on the CPU.
__device__ __forceinline__ float mask_value(int type, const void* mask, int64_t off) {
  switch (type) {
    case ATTNOPT_MASK_BOOL: return static_cast<const uint8_t*>(mask)[off] ? 0.0f : -INFINITY;
    case ATTNOPT_MASK_F32: return static_cast<const float*>(mask)[off];
    case ATTNOPT_MASK_F16: return __half2float(static_cast<const __half*>(mask)[off]);
    case ATTNOPT_MASK_BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(mask)[off]);
    default: return 0.0f;
  }
}

// The query/key rows one block works on. blockIdx.x is a query tile of the
// sequence (dense) or a (window, query tile) pair; y = query head, z = batch.
template <bool WINDOW>
struct Segment {
  int64_t window;  // WindowAttention: flat window id
  int64_t q0;      // first query row (position within the segment) of the tile
  int64_t nq, nk;  // rows in the segment
  const WindowGeometry* geo;

  __device__ __forceinline__ Segment(const KernelArgs& a, int64_t tile_rows) : geo(&a.geo) {
    if (WINDOW) {
      window = blockIdx.x / a.tiles_per_window;
      q0 = (blockIdx.x % a.tiles_per_window) * tile_rows;
      nq = nk = a.geo.window_size(window);
    } else {
      window = 0;
      q0 = static_cast<int64_t>(blockIdx.x) * tile_rows;
      nq = a.len_q;
      nk = a.len_k;
    }
  }
  // Token (sequence position) of row i of the segment.
  __device__ __forceinline__ int64_t token(int64_t i) const { return WINDOW ? geo->member_token(window, i) : i; }
};

// The keys [*begin, *end) of a segment's nk that a dense tile of queries
// [q0, q0 + rows) can see under the band; every key for WindowAttention.
template <bool WINDOW>
__device__ __forceinline__ void tile_keys(const KernelArgs& a, int64_t q0, int64_t rows, int64_t nk, int64_t* begin,
                                          int64_t* end) {
  *begin = 0;
  *end = nk;
  if (!WINDOW) a.band.key_range(q0, q0 + rows - 1, nk, begin, end);
}

}  // namespace cuda
}  // namespace attnopt

#endif  // ATTNOPT_CUDA_DEVICE_COMMON_CUH_
