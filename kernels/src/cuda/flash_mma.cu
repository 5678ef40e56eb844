// Tensor-core attention kernel for sm_80+ in f16/bf16 (FlashAttention-2
// scheme): 4 warps, 128 query rows per block (32 per warp) for Dv 17..64 and
// 64 (16 per warp) otherwise, key tiles of 64.
// S = Q.K^T and O += P.V use mma.sync m16n8k16 with fp32 accumulation; tiles
// move global -> shared with cp.async (16-byte chunks) when the layout allows
// and with scalar loads otherwise, and fragments come from ldmatrix. Head dims
// are zero-padded to a multiple of 16 inside shared memory only. The softmax
// is the same online softmax as the CPU core, in base 2, with masks and bounds applied
// only on the tiles that need them.
#include <cstring>
#include <type_traits>

#include "cuda/kernels.h"
#include "cuda/ptx.cuh"

namespace attnopt {
namespace cuda {
namespace {

constexpr int kThreads = 128;  // 4 warps
constexpr int kBK = 64;
// m-tiles of 16 query rows per warp: with 2, every K and V fragment loaded
// from shared memory feeds two MMAs, halving shared-memory reads per MMA, at
// twice the accumulator registers. On an H200 that paid for Dv 32 and 64
// (1.8-2.2x); Dv 128 would spill, and Dv 16 (the d 4 seed case, masked, so
// bound by the per-element mask path) spilled and ran 1.8x slower.
constexpr int m_tiles(int dv_p) { return dv_p == 32 || dv_p == 64 ? 2 : 1; }
constexpr int block_rows(int dv_p) { return 4 * 16 * m_tiles(dv_p); }

// Device code for sm_80+ only; the emulation (tests/emu) runs it on the CPU.
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800) || defined(ATTNOPT_CUDA_EMULATION)
#define ATTNOPT_SM80 1
#endif

#ifdef ATTNOPT_SM80
// Two floats as one 32-bit register of T; lo goes to the lower column.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same<T, __half>::value) {
    const __half2 h = __floats2half2_rn(lo, hi);
    uint32_t r;
    memcpy(&r, &h, sizeof(r));  // a bit copy, free of aliasing rules
    return r;
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t r;
    memcpy(&r, &h, sizeof(r));
    return r;
  }
}

// Copies ROWS rows (segment rows first.., tokens through seg) of a (token x
// dim) operand into a [ROWS][ld] tile, columns [0, cols) with zeros past dim
// and past the segment's nrows, so padded lanes contribute exact zeros.
template <typename T, int ROWS, bool WINDOW>
__device__ __forceinline__ void load_tile(T* dst, int ld, int cols, const T* src, int64_t row_stride,
                                          int64_t col_stride, int dim, const Segment<WINDOW>& seg, int64_t first,
                                          int64_t nrows, bool vec) {
  const int chunks = cols / 8;
  for (int i = threadIdx.x; i < ROWS * chunks; i += kThreads) {
    const int r = i / chunks, c = (i % chunks) * 8;
    T* d = dst + r * ld + c;
    const int64_t row = first + r;
    if (row < nrows && c < dim) {
      const T* s = src + seg.token(row) * row_stride + c * col_stride;
      if (vec) {
        cp_async16(d, s);  // dim % 8 == 0 here, so the chunk is entirely inside
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) d[e] = c + e < dim ? s[e * col_stride] : from_float<T>(0.0f);
      }
    } else {
      *reinterpret_cast<uint4*>(d) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}
#endif  // ATTNOPT_SM80

template <typename T, int DV_P, bool WINDOW>
__global__ void __launch_bounds__(kThreads) mma_attention_kernel(KernelArgs a) {
#ifdef ATTNOPT_SM80
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr int MT = m_tiles(DV_P);
  constexpr int BQ = block_rows(DV_P);
  constexpr int LDV = DV_P + 8;  // +8 halves: ldmatrix rows hit distinct banks
  constexpr int NDV = DV_P / 8;  // n-blocks of the output
  ATTNOPT_DYNAMIC_SMEM(unsigned char, smem_raw);
  const int dqk_pad = (a.dqk + 15) & ~15, ldq = dqk_pad + 8;
  T* Qs = reinterpret_cast<T*>(smem_raw);  // [BQ][ldq]
  T* Ks = Qs + BQ * ldq;                   // [kBK][ldq]
  T* Vs = Ks + kBK * ldq;                  // [kBK][LDV]

  const Segment<WINDOW> seg(a, BQ);
  if (seg.q0 >= seg.nq) return;  // uniform per block
  const int64_t b = blockIdx.z, hq = blockIdx.y, hkv = hq / a.group;
  const T* Q = static_cast<const T*>(a.q) + b * a.qs[0] + hq * a.qs[1];
  const T* K = static_cast<const T*>(a.k) + b * a.ks[0] + hkv * a.ks[1];
  const T* V = static_cast<const T*>(a.v) + b * a.vs[0] + hkv * a.vs[1];
  const int tid = threadIdx.x, warp = tid >> 5, ln = tid & 31, g = ln >> 2, t4 = ln & 3;

  const int64_t key_end = WINDOW ? seg.nk : causal_key_end(a, seg.q0, BQ, seg.nk);
  const int64_t ntiles = (key_end + kBK - 1) / kBK;

  load_tile<T, BQ, WINDOW>(Qs, ldq, dqk_pad, Q, a.qs[2], a.qs[3], a.dqk, seg, seg.q0, seg.nq, a.q_vec);
  if (ntiles > 0) load_tile<T, kBK, WINDOW>(Ks, ldq, dqk_pad, K, a.ks[2], a.ks[3], a.dqk, seg, 0, seg.nk, a.k_vec);
  cp_async_commit();

  // The warp owns rows [warp_q0, warp_q0 + 16 MT) of the tile; in m-tile mt
  // this thread holds rows g and g + 8.
  const int64_t warp_q0 = seg.q0 + warp * 16 * MT;
  int64_t qtok[MT][2], mrow[MT][2];  // mrow: the row's mask offset at key 0
  bool qvalid[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const int64_t row = warp_q0 + mt * 16 + g + rr * 8;
      qvalid[mt][rr] = row < seg.nq;
      qtok[mt][rr] = qvalid[mt][rr] ? seg.token(row) : 0;
      mrow[mt][rr] = b * a.ms[0] + hq * a.ms[1] + qtok[mt][rr] * a.ms[2];
    }
  }
  float o[MT][NDV][4];
  float m[MT][2], l[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int n = 0; n < NDV; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.0f;
    m[mt][0] = m[mt][1] = -INFINITY;
    l[mt][0] = l[mt][1] = 0.0f;
  }
  const float scale_log2 = a.scale * kLog2e;
  const int ksteps = dqk_pad / 16;

  for (int64_t kt = 0; kt < ntiles; ++kt) {
    const int64_t k0 = kt * kBK;
    cp_async_wait_all();
    __syncthreads();  // K tile (and Q) resident; every warp is done reading Vs
    load_tile<T, kBK, WINDOW>(Vs, LDV, DV_P, V, a.vs[2], a.vs[3], a.dv, seg, k0, seg.nk, a.v_vec);
    cp_async_commit();

    // S = Q.K^T; each K fragment feeds the warp's MT m-tiles.
    float s[MT][8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < 8; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.0f;
    for (int kk = 0; kk < ksteps; ++kk) {
      uint32_t af[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        ldmatrix_x4(af[mt], Qs + (warp * 16 * MT + mt * 16 + (ln & 15)) * ldq + kk * 16 + (ln >> 4) * 8);
#pragma unroll
      for (int nb2 = 0; nb2 < 4; ++nb2) {
        uint32_t bf[4];
        ldmatrix_x4(bf, Ks + (nb2 * 16 + (ln & 7) + ((ln >> 4) << 3)) * ldq + kk * 16 + ((ln >> 3) & 1) * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(s[mt][2 * nb2], af[mt], bf[0], bf[1]);
          mma16816<T>(s[mt][2 * nb2 + 1], af[mt], bf[2], bf[3]);
        }
      }
    }

    // Scores in base 2. An interior tile (every key present, no mask, wholly
    // below the causal diagonal for all of the warp's rows) needs only the
    // scale: the per-element index, mask and causal work is what bounded this
    // kernel on an H200 (kernels/README.md, GPU results). Rows past the end
    // read zero-padded Q there and are never stored.
    float mx[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) mx[mt][0] = mx[mt][1] = -INFINITY;
    const bool interior = k0 + kBK <= seg.nk &&
                          (WINDOW || (a.mask_type == 0 && (!a.causal || k0 + kBK - 1 <= warp_q0 + a.causal_offset)));
    if (interior) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[mt][n][e] *= scale_log2;
            mx[mt][e >> 1] = fmaxf(mx[mt][e >> 1], s[mt][n][e]);
          }
    } else {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int rr = e >> 1;
            const int64_t kj = k0 + n * 8 + t4 * 2 + (e & 1);
            float x = -INFINITY;
            if (qvalid[mt][rr] && kj < seg.nk) {
              x = s[mt][n][e] * a.scale;
              if (!WINDOW) {
                if (a.mask_type) x += mask_value(a.mask_type, a.mask, mrow[mt][rr] + kj * a.ms[3]);
                if (a.causal && kj > qtok[mt][rr] + a.causal_offset) x = -INFINITY;
              }
              x *= kLog2e;
            }
            s[mt][n][e] = x;
            mx[mt][rr] = fmaxf(mx[mt][rr], x);
          }
    }

    // Online softmax update; P goes straight into A fragments, one per 16 keys.
    uint32_t pa[MT][4][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      float alpha[2], mu[2];
#pragma unroll
      for (int rr = 0; rr < 2; ++rr) {
        float v = mx[mt][rr];
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));  // the quad shares a row
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
        const float m_new = fmaxf(m[mt][rr], v);
        mu[rr] = m_new == -INFINITY ? 0.0f : m_new;  // empty row so far: p = 0, no NaN
        alpha[rr] = fast_exp2(m[mt][rr] - mu[rr]);
        m[mt][rr] = m_new;
      }
      float ls[2] = {0.0f, 0.0f};
#pragma unroll
      for (int n = 0; n < 8; ++n) {
        const float p0 = fast_exp2(s[mt][n][0] - mu[0]), p1 = fast_exp2(s[mt][n][1] - mu[0]);
        const float p2 = fast_exp2(s[mt][n][2] - mu[1]), p3 = fast_exp2(s[mt][n][3] - mu[1]);
        ls[0] += p0 + p1;
        ls[1] += p2 + p3;
        pa[mt][n >> 1][(n & 1) * 2 + 0] = pack2<T>(p0, p1);
        pa[mt][n >> 1][(n & 1) * 2 + 1] = pack2<T>(p2, p3);
      }
      // Per-thread partial sums: alpha is uniform across the quad, so the
      // quad reduction can wait until the end.
      l[mt][0] = l[mt][0] * alpha[0] + ls[0];
      l[mt][1] = l[mt][1] * alpha[1] + ls[1];
#pragma unroll
      for (int n = 0; n < NDV; ++n) {
        o[mt][n][0] *= alpha[0];
        o[mt][n][1] *= alpha[0];
        o[mt][n][2] *= alpha[1];
        o[mt][n][3] *= alpha[1];
      }
    }

    cp_async_wait_all();
    __syncthreads();  // V tile resident; every warp is done reading Ks
    if (kt + 1 < ntiles)
      load_tile<T, kBK, WINDOW>(Ks, ldq, dqk_pad, K, a.ks[2], a.ks[3], a.dqk, seg, k0 + kBK, seg.nk, a.k_vec);
    cp_async_commit();

    // O += P.V; each V fragment feeds the warp's MT m-tiles.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
      for (int nd2 = 0; nd2 < DV_P / 16; ++nd2) {
        uint32_t bf[4];
        ldmatrix_x4_trans(bf, Vs + (kk * 16 + (ln & 7) + ((ln >> 3) & 1) * 8) * LDV + nd2 * 16 + (ln >> 4) * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(o[mt][2 * nd2], pa[mt][kk], bf[0], bf[1]);
          mma16816<T>(o[mt][2 * nd2 + 1], pa[mt][kk], bf[2], bf[3]);
        }
      }
    }
  }
  cp_async_wait_all();

  T* O = static_cast<T*>(a.o) + b * a.os[0] + hq * a.os[1];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float lt = l[mt][rr];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      if (!qvalid[mt][rr]) continue;
      const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;  // no admissible key: zeros
      T* orow = O + qtok[mt][rr] * a.os[2];
#pragma unroll
      for (int n = 0; n < NDV; ++n) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int d = n * 8 + t4 * 2 + c;
          if (d < a.dv) orow[d * a.os[3]] = from_float<T>(o[mt][n][rr * 2 + c] * inv);
        }
      }
    }
  }
#endif  // ATTNOPT_SM80
}

template <typename T, int DV_P>
cudaError_t launch_dv(bool window, const KernelArgs& a, const LaunchShape& s, cudaStream_t stream) {
  constexpr int BQ = block_rows(DV_P);
  const int ldq = ((a.dqk + 15) & ~15) + 8;
  const size_t smem = (static_cast<size_t>(BQ + kBK) * ldq + static_cast<size_t>(kBK) * (DV_P + 8)) * sizeof(T);
  int dev = 0, optin = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  if (err != cudaSuccess) return err;
  if (smem > static_cast<size_t>(optin)) return cudaErrorNotSupported;  // caller falls back to SIMT
  KernelArgs args = a;
  args.tiles_per_window = (s.rows + BQ - 1) / BQ;
  const dim3 grid(static_cast<unsigned>(args.tiles_per_window * s.segments), static_cast<unsigned>(s.heads_q),
                  static_cast<unsigned>(s.batch));
  auto kernel = window ? mma_attention_kernel<T, DV_P, true> : mma_attention_kernel<T, DV_P, false>;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  ATTNOPT_LAUNCH(kernel, grid, kThreads, smem, stream, args);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_typed(bool window, const KernelArgs& a, const LaunchShape& s, cudaStream_t stream) {
  if (a.dv <= 16) return launch_dv<T, 16>(window, a, s, stream);
  if (a.dv <= 32) return launch_dv<T, 32>(window, a, s, stream);
  if (a.dv <= 64) return launch_dv<T, 64>(window, a, s, stream);
  if (a.dv <= 128) return launch_dv<T, 128>(window, a, s, stream);
  return launch_dv<T, 256>(window, a, s, stream);
}

}  // namespace

cudaError_t launch_mma(attnopt_dtype dtype, bool window, KernelArgs args, const LaunchShape& shape,
                       cudaStream_t stream) {
  switch (dtype) {
    case ATTNOPT_F16: return launch_typed<__half>(window, args, shape, stream);
    case ATTNOPT_BF16: return launch_typed<__nv_bfloat16>(window, args, shape, stream);
    default: return cudaErrorNotSupported;
  }
}

}  // namespace cuda
}  // namespace attnopt
