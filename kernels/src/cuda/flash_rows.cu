// The literal pass for rows with no visible key, on the GPU (the CPU twin is
// src/cpu/empty_rows.cpp; both decide rows through src/common/empty_rows.h).
// It runs after the attention kernel on the same stream, one warp per query
// row: the warp scans the admitted keys 32 at a time and leaves as soon as one
// is visible, so a row with keys costs its leading padding; a row with none is
// recomputed over every key with the source graph's fills. Only launched when
// empty rows are possible (a mask, or causal rows above the first key).
#include "cuda/kernels.h"

#include "common/empty_rows.h"
#include "cuda/device_common.cuh"

namespace attnopt {
namespace cuda {
namespace {

constexpr int kRowsPerBlock = 4;
constexpr int kChunk = 8;  // output features per accumulation pass
// 8 blocks of 4 warps per SM, 64 registers: without the second bound ptxas
// (nvcc 13, sm_90) also stopped at 64 but spilled 48 bytes in f16/bf16.
constexpr int kMinBlocks = 8;

struct RowArgs {
  KernelArgs a;
  EmptyRows e;
  int fill_dtype;  // attnopt_dtype the literal scores are rounded to
};

__device__ __forceinline__ float warp_max(float x) {
  for (int m = 16; m > 0; m >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
  for (int m = 16; m > 0; m >>= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

__device__ __forceinline__ float round_as(int t, float x) {
  if (t == ATTNOPT_F16) return __half2float(__float2half_rn(x));
  if (t == ATTNOPT_BF16) return __bfloat162float(__float2bfloat16_rn(x));
  return x;
}

template <typename T>
__global__ void __launch_bounds__(kRowsPerBlock * 32, kMinBlocks) flash_rows_kernel(RowArgs r) {
  const KernelArgs& a = r.a;
  const EmptyRows& e = r.e;
  const int lane = threadIdx.x & 31;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (i >= a.len_q) return;  // the whole warp leaves together
  const int64_t h = blockIdx.y, b = blockIdx.z, hk = h / a.group;
  const int64_t moff = b * a.ms[0] + h * a.ms[1] + i * a.ms[2];
  int64_t lo, hi;
  e.band.key_range(i, i, a.len_k, &lo, &hi);
  for (int64_t j0 = lo; j0 < hi; j0 += 32) {
    const int64_t j = j0 + lane;
    float vis = 0.0f;
    if (j < hi && visible(e, a.mask_type, mask_value(a.mask_type, a.mask, moff + j * a.ms[3]), i, j)) vis = 1.0f;
    if (warp_max(vis) > 0.0f) return;
  }
  const T* q = static_cast<const T*>(a.q) + b * a.qs[0] + h * a.qs[1] + i * a.qs[2];
  const T* kb = static_cast<const T*>(a.k) + b * a.ks[0] + hk * a.ks[1];
  const T* vb = static_cast<const T*>(a.v) + b * a.vs[0] + hk * a.vs[1];
  T* o = static_cast<T*>(a.o) + b * a.os[0] + h * a.os[1] + i * a.os[2];
  auto literal = [&](int64_t j) {
    const T* k = kb + j * a.ks[2];
    float dot = 0.0f;
    for (int c = 0; c < a.dqk; ++c) dot += to_float<T>(q[c * a.qs[3]]) * to_float<T>(k[c * a.ks[3]]);
    float x = dot * a.scale;
    if (a.softcap > 0.0f) x = soft_cap(x, a.softcap);  // before the mask terms
    const float s = round_as(r.fill_dtype, x);
    const float m = mask_value(a.mask_type, a.mask, moff + j * a.ms[3]);
    return round_as(r.fill_dtype, s + literal_term(e, a.mask_type, m, i, j));
  };
  float mx = -INFINITY, nan = 0.0f;
  for (int64_t j = lane; j < a.len_k; j += 32) {
    const float x = literal(j);
    mx = fmaxf(mx, x);  // fmaxf drops NaN ...
    if (isnan(x)) nan = 1.0f;  // ... which makes the row NaN (docs/ops.md "NaN")
  }
  mx = warp_max(mx);
  nan = warp_max(nan);
  if (mx == -INFINITY || nan > 0.0f) {
    // Softmax over scores that are all -inf is 0/0, unless the source guarded
    // it (a guard tests -inf: NaN stays NaN).
    const float fill = e.mode == ATTNOPT_EMPTY_LITERAL_ZERO && nan == 0.0f ? 0.0f : NAN;
    for (int c = lane; c < a.dv; c += 32) o[c * a.os[3]] = from_float<T>(fill);
    return;
  }
  float sum = 0.0f;
  for (int64_t j = lane; j < a.len_k; j += 32) {
    const float w = expf(literal(j) - mx);
    if (w > 0.0f) sum += w;
  }
  sum = warp_sum(sum);
  for (int c0 = 0; c0 < a.dv; c0 += kChunk) {
    float acc[kChunk];
    for (int t = 0; t < kChunk; ++t) acc[t] = 0.0f;
    for (int64_t j = lane; j < a.len_k; j += 32) {
      const float w = expf(literal(j) - mx);
      if (!(w > 0.0f)) continue;
      const T* v = vb + j * a.vs[2];
      for (int t = 0; t < kChunk && c0 + t < a.dv; ++t) acc[t] += w * to_float<T>(v[(c0 + t) * a.vs[3]]);
    }
    for (int t = 0; t < kChunk; ++t) acc[t] = warp_sum(acc[t]);
    if (lane < kChunk && c0 + lane < a.dv) {
      float x = acc[0];
      for (int t = 1; t < kChunk; ++t) x = lane == t ? acc[t] : x;
      o[(c0 + lane) * a.os[3]] = from_float<T>(x / sum);
    }
  }
}

template <typename T>
cudaError_t launch_rows_typed(const RowArgs& r, int64_t batch, int64_t heads_q, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((r.a.len_q + kRowsPerBlock - 1) / kRowsPerBlock),
                  static_cast<unsigned>(heads_q), static_cast<unsigned>(batch));
  ATTNOPT_LAUNCH(flash_rows_kernel<T>, grid, kRowsPerBlock * 32, 0, stream, r);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_empty_rows(attnopt_dtype dtype, const KernelArgs& a, const attnopt_flash_params_v2& p,
                              cudaStream_t stream) {
  if (!empty_rows_possible(p) || p.qkv.len_q == 0) return cudaSuccess;
  if ((p.qkv.len_q + kRowsPerBlock - 1) / kRowsPerBlock > INT32_MAX) return cudaErrorNotSupported;
  const RowArgs r{a, empty_rows_of(p), p.fill_dtype};
  switch (dtype) {
    case ATTNOPT_F32: return launch_rows_typed<float>(r, p.qkv.batch, p.qkv.heads_q, stream);
    case ATTNOPT_F16: return launch_rows_typed<__half>(r, p.qkv.batch, p.qkv.heads_q, stream);
    case ATTNOPT_BF16: return launch_rows_typed<__nv_bfloat16>(r, p.qkv.batch, p.qkv.heads_q, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace attnopt
