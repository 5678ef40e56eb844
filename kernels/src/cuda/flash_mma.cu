// Tensor-core attention kernel for sm_80+ in f16/bf16 (FlashAttention-2
// scheme). The block shape per padded Dv is a table (mma_shape): warps and
// 16-row m-tiles per warp; key tiles of 64.
// S = Q.K^T and O += P.V use mma.sync m16n8k16 with fp32 accumulation; tiles
// move global -> shared with cp.async (16-byte chunks) when the layout allows
// and with scalar loads otherwise, through a ring of 1 or 2 K/V stages (the
// launcher picks the deepest that fits; the depth is a template parameter:
// read from the arguments, its int64 modulo and run-time waits cost 9-17 %
// on an H200, kernels/README.md "GPU results"; 3 stages were no faster than
// 2), and fragments come from ldmatrix.
// Head dims are zero-padded to a multiple of 16 inside shared memory only.
// The softmax is the same online softmax as the CPU core, in base 2.
// Structure: MmaTraits holds a configuration's compile-time shape; the
// kernel loads Q and runs the K/V ring, and per tile calls one function per
// phase (qk_tile, mask_tile, softmax_tile, pv_tile), then store_tile.
// Causal and sliding-window blocks visit only the key tiles some row can
// see, and a warp skips the tiles none of its rows can see; a bool mask is
// packed to one bit per key per tile in shared memory, and a warp whose rows
// keep (or drop) every key of a tile takes the unmasked (or no) path.
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "cuda/kernels.h"
#include "cuda/ptx.cuh"

namespace attnopt {
namespace cuda {
namespace {

constexpr int kBK = 64;

// Block shape per padded Dv. Two m-tiles let every K and V fragment loaded
// from shared memory feed two MMAs (on an H200 that paid 1.8-2.2x for Dv 32
// and 64, kernels/README.md); Dv 128 would spill with two, so it takes 8
// warps of one m-tile instead (each K/V tile then serves 128 rows); Dv 16,
// the masked d 4 seed case, spilled and ran 1.8x slower with two. min_blocks
// is __launch_bounds__' second argument: 1 lets ptxas use up to 255
// registers (without it, it capped Dv 32 at 168 and spilled, sm_90, nvcc
// 13.0); Dv 16 keeps 4 blocks of 4 warps per SM (at most 128 registers).
struct MmaShape {
  int warps, m_tiles, min_blocks;
};
constexpr MmaShape mma_shape(int dv_p) {
  return dv_p == 32 || dv_p == 64 ? MmaShape{4, 2, 1} : dv_p == 128 ? MmaShape{8, 1, 1}
                                                     : dv_p == 16 ? MmaShape{4, 1, 4}
                                                                  : MmaShape{4, 1, 1};
}
// WindowAttention's Dv 16 (the window geometry's extra registers) spilled
// 32 bytes at 4 blocks (128 registers); 3 blocks (up to 168) hold it.
constexpr int min_blocks(int dv_p, bool window) { return window && dv_p == 16 ? 3 : mma_shape(dv_p).min_blocks; }
constexpr int block_threads(int dv_p) { return mma_shape(dv_p).warps * 32; }
constexpr int block_rows(int dv_p) { return mma_shape(dv_p).warps * 16 * mma_shape(dv_p).m_tiles; }

// Device code for sm_80+ only; the emulation (tests/emu) runs it on the CPU.
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800) || defined(ATTNOPT_CUDA_EMULATION)
#define ATTNOPT_SM80 1
#endif

#ifdef ATTNOPT_SM80

// Copies ROWS rows (segment rows first.., tokens through seg) of a (token x
// dim) operand into a [ROWS][ld] tile, columns [0, cols) with zeros past dim
// and past the segment's nrows, so padded lanes contribute exact zeros.
template <typename T, int ROWS, int NT, bool WINDOW>
__device__ __forceinline__ void load_tile(T* dst, int ld, int cols, const T* src, int64_t row_stride,
                                          int64_t col_stride, int dim, const Segment<WINDOW>& seg, int64_t first,
                                          int64_t nrows, bool vec) {
  const int chunks = cols / 8;
  for (int i = threadIdx.x; i < ROWS * chunks; i += NT) {
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

// Bit j of bits[r] = bool mask (query q0 + r, key k0 + j) != 0, and 0 past
// the ends: one 8-byte read per 8 keys where the layout allows (mask_vec),
// instead of one byte read with 64-bit index arithmetic per score.
template <int ROWS, int NT>
__device__ __forceinline__ void load_mask_bits(uint64_t* bits, const KernelArgs& a, int64_t b, int64_t hq,
                                               int64_t q0, int64_t nq, int64_t k0, int64_t nk) {
  const uint8_t* base = static_cast<const uint8_t*>(a.mask) + b * a.ms[0] + hq * a.ms[1];
  for (int i = threadIdx.x; i < ROWS * 8; i += NT) {
    const int64_t row = q0 + (i >> 3), key = k0 + (i & 7) * 8;
    unsigned byte = 0;
    if (row < nq && key < nk) {
      const uint8_t* m = base + row * a.ms[2] + key * a.ms[3];
      if (a.mask_vec && key + 8 <= nk) {
        uint64_t x;
        memcpy(&x, m, sizeof(x));  // 8-byte aligned (mask_vec)
        x |= x >> 4;  // bit 0 of each byte = OR of its bits
        x |= x >> 2;
        x |= x >> 1;
        x &= 0x0101010101010101ull;
        byte = static_cast<unsigned>((x * 0x0102040810204080ull) >> 56);  // byte e's bit to bit e
      } else {
        const int n = nk - key < 8 ? static_cast<int>(nk - key) : 8;
        for (int e = 0; e < n; ++e) byte |= static_cast<unsigned>(m[e * a.ms[3]] != 0) << e;
      }
    }
    reinterpret_cast<uint8_t*>(bits)[i] = static_cast<uint8_t>(byte);  // little-endian: byte i&7 of the row
  }
}

// One key tile's K and V as two commit groups (empty past the last tile, so
// every thread's group count, and so each wait's argument, stays fixed).
template <typename T, int NT, int DV_P, bool WINDOW>
__device__ __forceinline__ void issue_tile(T* ks, T* vs, int64_t kt, int64_t kt_end, const KernelArgs& a, const T* K,
                                           const T* V, const Segment<WINDOW>& seg, int ldq, int dqk_pad) {
  if (kt < kt_end)
    load_tile<T, kBK, NT, WINDOW>(ks, ldq, dqk_pad, K, a.ks[2], a.ks[3], a.dqk, seg, kt * kBK, seg.nk, a.k_vec);
  cp_async_commit();
  if (kt < kt_end)
    load_tile<T, kBK, NT, WINDOW>(vs, DV_P + 8, DV_P, V, a.vs[2], a.vs[3], a.dv, seg, kt * kBK, seg.nk, a.v_vec);
  cp_async_commit();
}

__device__ __forceinline__ int clamp_key(int64_t x) {
  return static_cast<int>(x < -1 ? -1 : (x > kBK ? kBK : x));
}
#endif  // ATTNOPT_SM80

// One instantiation's compile-time shape (FlashAttention-2's kernel traits):
// element type, padded Dv, WindowAttention or not, K/V ring depth, and what
// follows from them. The phases below take it as their one parameter.
template <typename T_, int DV_P_, bool WINDOW_, int S_>
struct MmaTraits {
  using T = T_;
  static constexpr int DV_P = DV_P_;
  static constexpr bool WINDOW = WINDOW_;
  static constexpr int S = S_;
  static constexpr int P = S - 1;  // tiles loaded ahead of the one in use
  static constexpr int MT = mma_shape(DV_P).m_tiles;
  static constexpr int NT = block_threads(DV_P);
  static constexpr int BQ = block_rows(DV_P);
  static constexpr int LDV = DV_P + 8;  // +8 halves: ldmatrix rows hit distinct banks
  static constexpr int NDV = DV_P / 8;  // n-blocks of the output
  static_assert(S == 1 || S == 2, "K/V ring of 1 or 2 stages");
  static_assert(DV_P % 16 == 0 && DV_P >= 16 && DV_P <= 256, "Dv padded to a multiple of 16, at most 256");
  static_assert(BQ == (NT / 32) * 16 * MT, "each warp owns MT m-tiles of 16 rows");
  static_assert((LDV * sizeof(T)) % 16 == 0, "ldmatrix reads 16-byte rows");
  static_assert(kBK == 64, "a tile's keys are one 64-bit mask word and 4 P fragments of 16");
};

#ifdef ATTNOPT_SM80
constexpr float kLog2e = 1.4426950408889634f;

// A warp's view of its query rows: in m-tile mt this thread holds rows g
// and g + 8 (rr = 0, 1) of [warp_q0, warp_q0 + 16 MT).
template <class Tr>
struct WarpRows {
  int64_t qtok[Tr::MT][2], mrow[Tr::MT][2];  // mrow: the row's mask offset at key 0
  bool qvalid[Tr::MT][2];
};

// Phase: the warp's rows (token, mask offset, validity).
template <class Tr>
__device__ __forceinline__ void warp_rows_of(WarpRows<Tr>& w, const KernelArgs& a, const Segment<Tr::WINDOW>& seg,
                                             int64_t warp_q0, int64_t b, int64_t hq, int g) {
#pragma unroll
  for (int mt = 0; mt < Tr::MT; ++mt) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const int64_t row = warp_q0 + mt * 16 + g + rr * 8;
      w.qvalid[mt][rr] = row < seg.nq;
      w.qtok[mt][rr] = w.qvalid[mt][rr] ? seg.token(row) : 0;
      w.mrow[mt][rr] = b * a.ms[0] + hq * a.ms[1] + w.qtok[mt][rr] * a.ms[2];
    }
  }
}

// Phase: S = Q.K^T for the warp's rows and the tile's 64 keys; each K
// fragment feeds the warp's MT m-tiles.
template <class Tr>
__device__ __forceinline__ void qk_tile(float (&s)[Tr::MT][8][4], const typename Tr::T* Qs, const typename Tr::T* Kt,
                                        int ldq, int ksteps, int warp, int ln) {
  using T = typename Tr::T;
#pragma unroll
  for (int mt = 0; mt < Tr::MT; ++mt)
#pragma unroll
    for (int n = 0; n < 8; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.0f;
  for (int kk = 0; kk < ksteps; ++kk) {
    uint32_t af[Tr::MT][4];
#pragma unroll
    for (int mt = 0; mt < Tr::MT; ++mt)
      ldmatrix_x4(af[mt], Qs + (warp * 16 * Tr::MT + mt * 16 + (ln & 15)) * ldq + kk * 16 + (ln >> 4) * 8);
#pragma unroll
    for (int nb2 = 0; nb2 < 4; ++nb2) {
      uint32_t bf[4];
      ldmatrix_x4(bf, Kt + (nb2 * 16 + (ln & 7) + ((ln >> 4) << 3)) * ldq + kk * 16 + ((ln >> 3) & 1) * 8);
#pragma unroll
      for (int mt = 0; mt < Tr::MT; ++mt) {
        mma16816<T>(s[mt][2 * nb2], af[mt], bf[0], bf[1]);
        mma16816<T>(s[mt][2 * nb2 + 1], af[mt], bf[2], bf[3]);
      }
    }
  }
}

// Each score of the warp's tile through f, each row's maximum into mx (the
// interior tiles' whole mask phase).
template <class Tr, class F>
__device__ __forceinline__ void map_scores(float (&s)[Tr::MT][8][4], float (&mx)[Tr::MT][2], F f) {
#pragma unroll
  for (int mt = 0; mt < Tr::MT; ++mt)
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[mt][n][e] = f(s[mt][n][e]);
        mx[mt][e >> 1] = fmaxf(mx[mt][e >> 1], s[mt][n][e]);
      }
}

// Phase: scale, softcap, band and mask; the scores leave in base 2 with the
// rows' maxima in mx. An interior tile (every row sees every key) takes only
// the scale (the per-element index, mask and causal work is what bounded
// this kernel on an H200). Rows past the end read zero-padded Q on the
// interior path and are never stored.
template <class Tr>
__device__ __forceinline__ void mask_tile(float (&s)[Tr::MT][8][4], float (&mx)[Tr::MT][2], const KernelArgs& a,
                                          const WarpRows<Tr>& w, const uint64_t (&mw)[Tr::MT][2], bool interior,
                                          bool bool_mask, int64_t k0, int64_t nk, float scale_log2, int t4) {
  constexpr int MT = Tr::MT;
  constexpr bool WINDOW = Tr::WINDOW;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) mx[mt][0] = mx[mt][1] = -INFINITY;
  if (interior && a.softcap > 0.0f) {  // a loop of its own: the plain one stays as it was
    map_scores<Tr>(s, mx, [&](float x) { return soft_cap(x * a.scale, a.softcap) * kLog2e; });
  } else if (interior) {
    map_scores<Tr>(s, mx, [&](float x) { return x * scale_log2; });
  } else {
    // Per row, the tile-relative keys it may see: (lo, hi], and below nk.
    const int kn = clamp_key(nk - k0);
    int lo[MT][2], hi[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int rr = 0; rr < 2; ++rr) {
        hi[mt][rr] = !w.qvalid[mt][rr] ? -1 : (!WINDOW && a.band.causal) ? clamp_key(a.band.end(w.qtok[mt][rr]) - 1 - k0) : kBK;
        lo[mt][rr] = (!WINDOW && a.band.windowed()) ? clamp_key(a.band.begin(w.qtok[mt][rr]) - 1 - k0) : -1;
      }
    // The softcap in a pass of its own, so the masking loop below stays
    // as small as before softcap: inside it, the cap's inlined code cost
    // the masked d 4 seed case 24 % on an H200 (kernels/README.md).
    float sc = a.scale;
    if (a.softcap > 0.0f) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[mt][n][e] = soft_cap(s[mt][n][e] * a.scale, a.softcap);
      sc = 1.0f;
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int rr = e >> 1, jj = n * 8 + t4 * 2 + (e & 1);
          float x = -INFINITY;
          if (jj > lo[mt][rr] && jj <= hi[mt][rr] && jj < kn) {
            x = s[mt][n][e] * sc;
            if (bool_mask) {
              if (!((mw[mt][rr] >> jj) & 1u)) x = -INFINITY;
              x *= kLog2e;
            } else if (!WINDOW && a.mask_type) {
              const float mv = mask_value(a.mask_type, a.mask, w.mrow[mt][rr] + (k0 + jj) * a.ms[3]);
              x = (x + mv) * kLog2e;
              // A finite fill near float's lowest (finfo.min) overflows to
              // -inf times log2 e: held at the lowest finite value, so a
              // row of such fills is the mean of V the source computes, as
              // on the CPU (docs/fully-masked-rows.md). NaN stays NaN.
              if (x == -INFINITY && mv != -INFINITY) x = -FLT_MAX;
            } else {
              x *= kLog2e;
            }
          }
          s[mt][n][e] = x;
          mx[mt][rr] = fmaxf(mx[mt][rr], x);
        }
  }
}

// Phase: the online softmax update; P goes straight into A fragments, one
// per 16 keys, and O and l are rescaled by alpha.
template <class Tr>
__device__ __forceinline__ void softmax_tile(const float (&s)[Tr::MT][8][4], const float (&mx)[Tr::MT][2],
                                             float (&m)[Tr::MT][2], float (&l)[Tr::MT][2],
                                             float (&o)[Tr::MT][Tr::NDV][4], uint32_t (&pa)[Tr::MT][4][4]) {
  using T = typename Tr::T;
#pragma unroll
  for (int mt = 0; mt < Tr::MT; ++mt) {
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
    for (int n = 0; n < Tr::NDV; ++n) {
      o[mt][n][0] *= alpha[0];
      o[mt][n][1] *= alpha[0];
      o[mt][n][2] *= alpha[1];
      o[mt][n][3] *= alpha[1];
    }
  }
}

// Phase: O += P.V; each V fragment feeds the warp's MT m-tiles.
template <class Tr>
__device__ __forceinline__ void pv_tile(float (&o)[Tr::MT][Tr::NDV][4], const uint32_t (&pa)[Tr::MT][4][4],
                                        const typename Tr::T* Vt, int ln) {
  using T = typename Tr::T;
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (int nd2 = 0; nd2 < Tr::DV_P / 16; ++nd2) {
      uint32_t bf[4];
      ldmatrix_x4_trans(bf, Vt + (kk * 16 + (ln & 7) + ((ln >> 3) & 1) * 8) * Tr::LDV + nd2 * 16 + (ln >> 4) * 8);
#pragma unroll
      for (int mt = 0; mt < Tr::MT; ++mt) {
        mma16816<T>(o[mt][2 * nd2], pa[mt][kk], bf[0], bf[1]);
        mma16816<T>(o[mt][2 * nd2 + 1], pa[mt][kk], bf[2], bf[3]);
      }
    }
  }
}

// Phase, the epilogue: each row's sum reduced over its quad, O / l written
// for the valid rows (zeros for a row that saw no admissible key).
template <class Tr>
__device__ __forceinline__ void store_tile(const float (&o)[Tr::MT][Tr::NDV][4], const float (&l)[Tr::MT][2],
                                           const WarpRows<Tr>& w, const KernelArgs& a, int64_t b, int64_t hq, int t4) {
  using T = typename Tr::T;
  T* O = static_cast<T*>(a.o) + b * a.os[0] + hq * a.os[1];
#pragma unroll
  for (int mt = 0; mt < Tr::MT; ++mt) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float lt = l[mt][rr];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      if (!w.qvalid[mt][rr]) continue;
      const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;  // no admissible key: zeros
      T* orow = O + w.qtok[mt][rr] * a.os[2];
#pragma unroll
      for (int n = 0; n < Tr::NDV; ++n) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int d = n * 8 + t4 * 2 + c;
          if (d < a.dv) orow[d * a.os[3]] = from_float<T>(o[mt][n][rr * 2 + c] * inv);
        }
      }
    }
  }
}
#endif  // ATTNOPT_SM80

// The kernel: Q loaded once, then per key tile load (the K/V ring), QK^T,
// mask, online softmax and PV, then the epilogue; the phases are above.
template <typename T, int DV_P, bool WINDOW, int S>
__global__ void __launch_bounds__(block_threads(DV_P), min_blocks(DV_P, WINDOW)) mma_attention_kernel(KernelArgs a) {
  using Tr = MmaTraits<T, DV_P, WINDOW, S>;
#ifdef ATTNOPT_SM80
  constexpr int MT = Tr::MT, NT = Tr::NT, BQ = Tr::BQ, NDV = Tr::NDV, P = Tr::P;
  ATTNOPT_DYNAMIC_SMEM(unsigned char, smem_raw);
  const int dqk_pad = (a.dqk + 15) & ~15, ldq = dqk_pad + 8;
  const int stage_elems = kBK * ldq + kBK * Tr::LDV;
  T* Qs = reinterpret_cast<T*>(smem_raw);  // [BQ][ldq], then S x {K [kBK][ldq], V [kBK][LDV]}
  T* ring = Qs + BQ * ldq;
  uint64_t* mbits = reinterpret_cast<uint64_t*>(ring + S * stage_elems);  // [BQ] bool mask bits
  // Tile kt lives in stage kt % S; kt counts up from kt_begin one at a time.
  auto Ks = [&](int64_t kt) { return ring + (S == 1 ? 0 : static_cast<int>(kt & 1)) * stage_elems; };
  auto Vs = [&](int64_t kt) { return Ks(kt) + kBK * ldq; };

  const Segment<WINDOW> seg(a, BQ);
  if (seg.q0 >= seg.nq) return;  // uniform per block
  const int64_t b = blockIdx.z, hq = blockIdx.y, hkv = hq / a.group;
  const T* Q = static_cast<const T*>(a.q) + b * a.qs[0] + hq * a.qs[1];
  const T* K = static_cast<const T*>(a.k) + b * a.ks[0] + hkv * a.ks[1];
  const T* V = static_cast<const T*>(a.v) + b * a.vs[0] + hkv * a.vs[1];
  const int tid = threadIdx.x, warp = tid >> 5, ln = tid & 31, g = ln >> 2, t4 = ln & 3;
  const bool bool_mask = !WINDOW && a.mask_type == ATTNOPT_MASK_BOOL;

  // Key tiles [kt_begin, kt_end): those some row of the block can see.
  int64_t key_begin, key_end;
  tile_keys<WINDOW>(a, seg.q0, BQ, seg.nk, &key_begin, &key_end);
  const int64_t kt_begin = key_begin / kBK, kt_end = key_end > key_begin ? (key_end + kBK - 1) / kBK : kt_begin;

  // Phase: load Q, and the first tiles of the ring.
  load_tile<T, BQ, NT, WINDOW>(Qs, ldq, dqk_pad, Q, a.qs[2], a.qs[3], a.dqk, seg, seg.q0, seg.nq, a.q_vec);
  if (S == 1) cp_async_commit();  // Q alone; tile kt is loaded inside its iteration
  for (int p = 0; p < P; ++p)  // Q joins the first K group
    issue_tile<T, NT, DV_P, WINDOW>(Ks(kt_begin + p), Vs(kt_begin + p), kt_begin + p, kt_end, a, K, V, seg, ldq, dqk_pad);

  const int64_t warp_q0 = seg.q0 + warp * 16 * MT, warp_q1 = warp_q0 + 16 * MT - 1;
  WarpRows<Tr> w;
  warp_rows_of<Tr>(w, a, seg, warp_q0, b, hq, g);
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
  const bool warp_rows = warp_q0 < seg.nq;  // rows past the end are never stored

  for (int64_t kt = kt_begin; kt < kt_end; ++kt) {
    const int64_t k0 = kt * kBK;
    // Phase: load tile kt (and issue the one after it).
    if (S == 1) {
      __syncthreads();  // every warp is done with the previous tile's K, V and mask bits
      issue_tile<T, NT, DV_P, WINDOW>(Ks(kt), Vs(kt), kt, kt_end, a, K, V, seg, ldq, dqk_pad);
      cp_async_wait(1);
    } else {
      cp_async_wait(2 * P - 1);  // K(kt) landed; V(kt) and the tiles ahead may be in flight
    }
    // The mask bits' previous readers finished before the last barrier.
    if (bool_mask) load_mask_bits<BQ, NT>(mbits, a, b, hq, seg.q0, seg.nq, k0, seg.nk);
    __syncthreads();  // K(kt) and mask bits visible; every warp is done with tile kt - 1
    if (S > 1)  // into tile kt - 1's stage
      issue_tile<T, NT, DV_P, WINDOW>(Ks(kt + P), Vs(kt + P), kt + P, kt_end, a, K, V, seg, ldq, dqk_pad);

    // Does any of the warp's rows see a key of this tile, and do all of them
    // see all of it (then only the scale is applied)?
    bool active = warp_rows, mask_free = !bool_mask && (WINDOW || a.mask_type == ATTNOPT_MASK_NONE);
    if (!WINDOW) {
      if (a.band.misses(warp_q0, warp_q1, k0, k0 + kBK - 1)) active = false;
    }
    uint64_t mw[MT][2];
    if (bool_mask) {
      bool keep = true, drop = true;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
          mw[mt][rr] = mbits[warp * 16 * MT + mt * 16 + g + rr * 8];
          keep &= mw[mt][rr] == ~0ull;
          drop &= mw[mt][rr] == 0ull;
        }
      mask_free = __all_sync(0xffffffffu, keep) != 0;
      if (__all_sync(0xffffffffu, drop)) active = false;
    }
    const bool interior = mask_free && k0 + kBK <= seg.nk &&
                          (WINDOW || a.band.covers(warp_q0, warp_q1, k0, k0 + kBK - 1));

    uint32_t pa[MT][4][4];
    if (active) {
      float s[MT][8][4];
      qk_tile<Tr>(s, Qs, Ks(kt), ldq, ksteps, warp, ln);
      float mx[MT][2];
      mask_tile<Tr>(s, mx, a, w, mw, interior, bool_mask, k0, seg.nk, scale_log2, t4);
      softmax_tile<Tr>(s, mx, m, l, o, pa);
    }

    cp_async_wait(2 * P);  // V(kt) landed
    __syncthreads();

    if (active) pv_tile<Tr>(o, pa, Vs(kt), ln);
  }
  cp_async_wait_all();
  store_tile<Tr>(o, l, w, a, b, hq, t4);
#endif  // ATTNOPT_SM80
}

// Shared memory of one block with the given ring depth.
template <typename T, int DV_P>
size_t mma_smem_bytes(const KernelArgs& a, int stages) {
  const size_t ldq = ((a.dqk + 15) & ~15) + 8;
  const size_t stage = static_cast<size_t>(kBK) * ldq + static_cast<size_t>(kBK) * (DV_P + 8);
  return (block_rows(DV_P) * ldq + stages * stage) * sizeof(T) + block_rows(DV_P) * sizeof(uint64_t);
}

// Ring depth: ATTNOPT_MMA_STAGES (1 or 2, for device experiments) or 2, made
// shallower until the block fits the device's opt-in shared memory.
int requested_stages() {
  const char* e = std::getenv("ATTNOPT_MMA_STAGES");
  const int s = e ? std::atoi(e) : 2;
  return s < 2 ? 1 : 2;
}

template <typename T, int DV_P>
cudaError_t launch_dv(bool window, const KernelArgs& a, const LaunchShape& s, cudaStream_t stream) {
  constexpr int BQ = block_rows(DV_P);
  int dev = 0, optin = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  if (err != cudaSuccess) return err;
  KernelArgs args = a;
  args.stages = requested_stages();
  while (args.stages > 1 && mma_smem_bytes<T, DV_P>(a, args.stages) > static_cast<size_t>(optin)) --args.stages;
  const size_t smem = mma_smem_bytes<T, DV_P>(a, args.stages);
  if (smem > static_cast<size_t>(optin)) return cudaErrorNotSupported;  // caller falls back to SIMT
  args.tiles_per_window = (s.rows + BQ - 1) / BQ;
  const dim3 grid(static_cast<unsigned>(args.tiles_per_window * s.segments), static_cast<unsigned>(s.heads_q),
                  static_cast<unsigned>(s.batch));
  auto kernel = args.stages == 2 ? (window ? mma_attention_kernel<T, DV_P, true, 2> : mma_attention_kernel<T, DV_P, false, 2>)
                                 : (window ? mma_attention_kernel<T, DV_P, true, 1> : mma_attention_kernel<T, DV_P, false, 1>);
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  ATTNOPT_LAUNCH(kernel, grid, block_threads(DV_P), smem, stream, args);
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
