// Micro-GEMM on the Hopper path's primitives, the first check a device runs
// (kernels/bench/lease.sh call 1, wgmma_gemm_check.py, against NumPy): C (M x N, f32) = A (M x K)
// . B with A K-major and B either K-major (B given as N x K) or MN-major
// (B given as K x N, wgmma's transposed B). One warpgroup per 64 x 64 tile
// of C, 64-wide K tiles through TMA (128-byte swizzle) into a two-stage
// ring completed by mbarriers, wgmma m64n64k16 from shared memory. The
// attention kernel (flash_wgmma.cu) reads Q, K and V the same two ways.
#include "attnopt/attnopt.h"
#include "cuda/kernels.h"
#include "cuda/tensor_map.h"

namespace attnopt {
namespace cuda {
namespace {

struct GemmArgs {
  CUtensorMap ta, tb;
  float* c;
  int m, n, k;
};

constexpr uint32_t kTileBytes = 64 * 64 * 2;  // one 64 x 64 tile of 16-bit elements

__device__ __forceinline__ uint64_t kmajor_desc(uint32_t tile, int kk) {
  // K-major, 128-byte rows: step K by 16 elements = 32 bytes; 8-row groups 1024 bytes apart.
  return encode_smem_desc(SmemDesc{tile + 32u * kk, 16u, 1024u, 0u, Swizzle::k128B});
}
__device__ __forceinline__ uint64_t mnmajor_desc(uint32_t tile, int kk) {
  // MN-major, 128-byte rows of N: step K by 16 rows = two 1024-byte groups.
  return encode_smem_desc(SmemDesc{tile + 2048u * kk, kTileBytes, 1024u, 0u, Swizzle::k128B});
}

template <typename T, int TB>
__global__ void __launch_bounds__(128) wgmma_gemm_kernel(const __grid_constant__ GemmArgs g) {
#ifdef ATTNOPT_SM90A
  ATTNOPT_DYNAMIC_SMEM(unsigned char, raw);
  unsigned char* smem = raw + ((1024u - (smem_u32(raw) & 1023u)) & 1023u);  // swizzled tiles: 1024-aligned
  unsigned char* As = smem;                                      // [2][64 x 64]
  unsigned char* Bs = smem + 2 * kTileBytes;                     // [2][64 x 64]
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + 4 * kTileBytes);  // [2]
  const int tid = threadIdx.x, m0 = blockIdx.x * 64, n0 = blockIdx.y * 64;
  const int ktiles = (g.k + 63) / 64;
  if (tid == 0) {
    mbar_init(&full[0], 1);
    mbar_init(&full[1], 1);
    mbar_fence_init();
  }
  __syncthreads();
  auto issue = [&](int kt) {
    const int s = kt & 1;
    mbar_arrive_expect_tx(&full[s], 2 * kTileBytes);
    tma_load_2d(As + s * kTileBytes, &g.ta, &full[s], kt * 64, m0);
    if (TB) tma_load_2d(Bs + s * kTileBytes, &g.tb, &full[s], n0, kt * 64);
    else tma_load_2d(Bs + s * kTileBytes, &g.tb, &full[s], kt * 64, n0);
  };
  if (tid == 0 && ktiles > 0) issue(0);
  float acc[32];
  for (int i = 0; i < 32; ++i) acc[i] = 0.0f;
  for (int kt = 0; kt < ktiles; ++kt) {
    const int s = kt & 1;
    // Stage s ^ 1 was read by tile kt - 1's wgmmas, all waited for before the barrier below.
    if (tid == 0 && kt + 1 < ktiles) issue(kt + 1);
    mbar_wait(&full[s], (kt >> 1) & 1);
    const uint32_t a = smem_u32(As + s * kTileBytes), b = smem_u32(Bs + s * kTileBytes);
    wgmma_fence();
    for (int kk = 0; kk < 4; ++kk)
      wgmma_ss<T, 64, TB>(acc, kmajor_desc(a, kk), TB ? mnmajor_desc(b, kk) : kmajor_desc(b, kk), 1);
    wgmma_commit();
    wgmma_wait<0>();
    __syncthreads();
  }
  // Element i of the accumulator: row 16 warp + g + 8((i>>1)&1), column 8(i>>2) + 2t + (i&1).
  const int warp = tid / 32, gq = (tid % 32) / 4, tq = tid % 4;
  for (int i = 0; i < 32; ++i) {
    const int row = m0 + 16 * warp + gq + 8 * ((i >> 1) & 1), col = n0 + 8 * (i >> 2) + 2 * tq + (i & 1);
    if (row < g.m && col < g.n) g.c[static_cast<int64_t>(row) * g.n + col] = acc[i];
  }
#endif
}

template <typename T, int TB>
cudaError_t launch_gemm(GemmArgs& g, cudaStream_t stream) {
  const size_t smem = 4 * kTileBytes + 64 + 1024;
  auto kernel = wgmma_gemm_kernel<T, TB>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>((g.m + 63) / 64), static_cast<unsigned>((g.n + 63) / 64), 1);
  ATTNOPT_LAUNCH(kernel, grid, 128, smem, stream, g);
  return cudaGetLastError();
}

}  // namespace
}  // namespace cuda
}  // namespace attnopt

extern "C" ATTNOPT_API int attnopt_cuda_wgmma_gemm_check(int dtype, const void* a, const void* b, float* c, int m,
                                                         int n, int k, int b_mn_major, void* stream) {
  using namespace attnopt::cuda;
  if ((dtype != ATTNOPT_F16 && dtype != ATTNOPT_BF16) || m < 1 || n < 1 || k < 1 || !a || !b || !c)
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (!device_is_sm90()) return ATTNOPT_ERR_UNSUPPORTED;
  const bool bf16 = dtype == ATTNOPT_BF16;
  GemmArgs g{};
  const int64_t adims[2] = {k, m}, astr[2] = {1, k};
  const int64_t bdims[2] = {b_mn_major ? n : k, b_mn_major ? k : n}, bstr[2] = {1, b_mn_major ? n : k};
  const uint32_t box[2] = {64, 64};
  if (!make_tensor_map(&g.ta, bf16, 2, a, adims, astr, box) || !make_tensor_map(&g.tb, bf16, 2, b, bdims, bstr, box))
    return ATTNOPT_ERR_UNSUPPORTED;
  g.c = c;
  g.m = m;
  g.n = n;
  g.k = k;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  cudaError_t err;
  if (bf16) err = b_mn_major ? launch_gemm<__nv_bfloat16, 1>(g, st) : launch_gemm<__nv_bfloat16, 0>(g, st);
  else err = b_mn_major ? launch_gemm<__half, 1>(g, st) : launch_gemm<__half, 0>(g, st);
  return err == cudaSuccess ? ATTNOPT_OK : ATTNOPT_ERR_CUDA;
}
