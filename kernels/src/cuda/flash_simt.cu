// SIMT attention kernel (no tensor cores): runs on sm_60 and newer, handles
// f32/f16/bf16 and every head dim 1..256. A block of 128 threads owns BQ =
// 128 / TPR query rows; each row is served by TPR adjacent lanes of one warp,
// which split the keys of a tile (scores) and the output features (P.V).
// K/V tiles of BK keys are staged in shared memory as float, zero-padded, so
// any head dim works without padding in global memory.
#include <cfloat>

#include "cuda/kernels.h"

namespace attnopt {
namespace cuda {
namespace {

constexpr int kThreads = 128;

__host__ __device__ constexpr int odd_ld(int d) { return d | 1; }  // odd row stride: no bank conflicts

template <typename T, int TPR, int BK, int DV_MAX, bool WINDOW>
__global__ void __launch_bounds__(kThreads) simt_attention_kernel(KernelArgs a) {
  constexpr int BQ = kThreads / TPR;
  constexpr int KPT = BK / TPR;      // scores per thread per tile
  constexpr int DPT = DV_MAX / TPR;  // output features per thread
  static_assert(BK % TPR == 0 && DV_MAX % TPR == 0 && 32 % TPR == 0, "bad SIMT config");

  ATTNOPT_DYNAMIC_SMEM(float, smem);
  const int ldq = odd_ld(a.dqk), ldv = odd_ld(a.dv);
  float* qs = smem;              // [BQ][ldq]
  float* ks = qs + BQ * ldq;     // [BK][ldq]
  float* vs = ks + BK * ldq;     // [BK][ldv]
  float* ps = vs + BK * ldv;     // [BQ][BK]
  // Token indices after the floats, at an 8-byte aligned offset.
  const int nfloat = BQ * ldq + BK * ldq + BK * ldv + BQ * BK;
  int64_t* qtok = reinterpret_cast<int64_t*>(smem + ((nfloat + 1) & ~1));  // [BQ]
  int64_t* ktok = qtok + BQ;                                                  // [BK]

  const Segment<WINDOW> seg(a, BQ);
  if (seg.q0 >= seg.nq) return;  // a tile past a small window: uniform exit
  const int64_t b = blockIdx.z, hq = blockIdx.y, hkv = hq / a.group;
  const int tid = threadIdx.x, row = tid / TPR, lane = tid % TPR;
  const T* Q = static_cast<const T*>(a.q) + b * a.qs[0] + hq * a.qs[1];
  const T* K = static_cast<const T*>(a.k) + b * a.ks[0] + hkv * a.ks[1];
  const T* V = static_cast<const T*>(a.v) + b * a.vs[0] + hkv * a.vs[1];

  for (int r = tid; r < BQ; r += kThreads) qtok[r] = seg.q0 + r < seg.nq ? seg.token(seg.q0 + r) : -1;
  __syncthreads();
  for (int i = tid; i < BQ * a.dqk; i += kThreads) {
    const int r = i / a.dqk, c = i % a.dqk;
    qs[r * ldq + c] = qtok[r] >= 0 ? to_float(Q[qtok[r] * a.qs[2] + c * a.qs[3]]) : 0.0f;
  }
  const int64_t my_tok = qtok[row];
  // Causal and sliding-window blocks visit only the keys some row can see:
  // an fp32 model with a window pays the window's cost, not causal's.
  int64_t key_begin, key_end;
  tile_keys<WINDOW>(a, seg.q0, BQ, seg.nk, &key_begin, &key_end);
  const int64_t mrow = b * a.ms[0] + hq * a.ms[1] + my_tok * a.ms[2];

  float m = -INFINITY, l = 0.0f;
  float acc[DPT];
#pragma unroll
  for (int e = 0; e < DPT; ++e) acc[e] = 0.0f;

  for (int64_t k0 = key_begin; k0 < key_end; k0 += BK) {
    const int kt = static_cast<int>(key_end - k0 < BK ? key_end - k0 : BK);
    __syncthreads();  // previous tile fully consumed
    for (int j = tid; j < BK; j += kThreads) ktok[j] = j < kt ? seg.token(k0 + j) : -1;
    __syncthreads();
    for (int i = tid; i < BK * a.dqk; i += kThreads) {
      const int j = i / a.dqk, c = i % a.dqk;
      ks[j * ldq + c] = ktok[j] >= 0 ? to_float(K[ktok[j] * a.ks[2] + c * a.ks[3]]) : 0.0f;
    }
    for (int i = tid; i < BK * a.dv; i += kThreads) {
      const int j = i / a.dv, c = i % a.dv;
      vs[j * ldv + c] = ktok[j] >= 0 ? to_float(V[ktok[j] * a.vs[2] + c * a.vs[3]]) : 0.0f;
    }
    __syncthreads();

    float sv[KPT];
    float tile_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < KPT; ++i) {
      const int j = lane + i * TPR;
      float s = -INFINITY;
      if (my_tok >= 0 && j < kt) {
        const float* qr = qs + row * ldq;
        const float* kr = ks + j * ldq;
        float dot = 0.0f;
        for (int c = 0; c < a.dqk; ++c) dot += qr[c] * kr[c];
        s = dot * a.scale;
        if (a.softcap > 0.0f) s = soft_cap(s, a.softcap);  // uniform branch: before the mask
        const int64_t ktk = ktok[j];
        if (!WINDOW) {
          if (a.mask_type) s += mask_value(a.mask_type, a.mask, mrow + ktk * a.ms[3]);
          if (!a.band.admits(my_tok, ktk)) s = -INFINITY;
        }
      }
      sv[i] = s;
      tile_max = fmaxf(tile_max, s);
    }
#pragma unroll
    for (int off = TPR / 2; off > 0; off /= 2) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, off));
    const float m_new = fmaxf(m, tile_max);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // row still empty: p = 0, no NaN
    const float alpha = expf(m - m_use);
    float psum = 0.0f;
#pragma unroll
    for (int i = 0; i < KPT; ++i) {
      const float p = expf(sv[i] - m_use);
      psum += p;
      ps[row * BK + lane + i * TPR] = p;
    }
#pragma unroll
    for (int off = TPR / 2; off > 0; off /= 2) psum += __shfl_xor_sync(0xffffffffu, psum, off);
    l = l * alpha + psum;
    m = m_new;
    __syncwarp();  // the row's lanes share one warp
#pragma unroll
    for (int e = 0; e < DPT; ++e) acc[e] *= alpha;
    for (int j = 0; j < kt; ++j) {
      const float p = ps[row * BK + j];
      const float* vr = vs + j * ldv;
#pragma unroll
      for (int e = 0; e < DPT; ++e) {
        const int d = lane + e * TPR;
        if (d < a.dv) acc[e] += p * vr[d];
      }
    }
  }

  if (my_tok < 0) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // no admissible key: zeros
  T* O = static_cast<T*>(a.o) + b * a.os[0] + hq * a.os[1] + my_tok * a.os[2];
#pragma unroll
  for (int e = 0; e < DPT; ++e) {
    const int d = lane + e * TPR;
    if (d < a.dv) O[d * a.os[3]] = from_float<T>(acc[e] * inv);
  }
}

template <int TPR, int BK>
size_t simt_smem_bytes(const KernelArgs& a) {
  constexpr int BQ = kThreads / TPR;
  const int nfloat = BQ * odd_ld(a.dqk) + BK * odd_ld(a.dqk) + BK * odd_ld(a.dv) + BQ * BK;
  return static_cast<size_t>((nfloat + 1) & ~1) * sizeof(float) + (BQ + BK) * sizeof(int64_t);
}

template <typename T, int TPR, int BK, int DV_MAX>
cudaError_t launch_config(bool window, const KernelArgs& a, const LaunchShape& s, cudaStream_t stream) {
  constexpr int BQ = kThreads / TPR;
  const int64_t tiles = (s.rows + BQ - 1) / BQ;
  KernelArgs args = a;
  args.tiles_per_window = tiles;
  const dim3 grid(static_cast<unsigned>(tiles * s.segments), static_cast<unsigned>(s.heads_q),
                  static_cast<unsigned>(s.batch));
  const size_t smem = simt_smem_bytes<TPR, BK>(a);
  auto kernel = window ? simt_attention_kernel<T, TPR, BK, DV_MAX, true>
                      : simt_attention_kernel<T, TPR, BK, DV_MAX, false>;
  ATTNOPT_LAUNCH(kernel, grid, kThreads, smem, stream, args);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_typed(bool window, const KernelArgs& a, const LaunchShape& s, cudaStream_t stream) {
  // Configurations keep shared memory under the 48 KiB every GPU allows.
  const int d = a.dqk > a.dv ? a.dqk : a.dv;
  if (d <= 64) return launch_config<T, 2, 32, 64>(window, a, s, stream);
  if (d <= 128) return launch_config<T, 8, 32, 128>(window, a, s, stream);
  return launch_config<T, 16, 16, 256>(window, a, s, stream);
}

}  // namespace

cudaError_t launch_simt(attnopt_dtype dtype, bool window, KernelArgs args, const LaunchShape& shape,
                        cudaStream_t stream) {
  switch (dtype) {
    case ATTNOPT_F32: return launch_typed<float>(window, args, shape, stream);
    case ATTNOPT_F16: return launch_typed<__half>(window, args, shape, stream);
    case ATTNOPT_BF16: return launch_typed<__nv_bfloat16>(window, args, shape, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cuda
}  // namespace attnopt
