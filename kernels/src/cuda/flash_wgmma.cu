// Hopper (sm_90a) attention kernel for f16/bf16 at head dim 64 and 128:
// FlashAttention-3's structure without its last two steps.
// - 3 warpgroups: a producer (setmaxnreg down to 40 registers) whose one
//   thread issues TMA loads of Q and of the K/V tiles into a ring of stages,
//   each stage's K and V completing their own mbarrier ("full"); two consumer
//   warpgroups (setmaxnreg up to 232) of 64 query rows each, which free a
//   stage by arriving on its "empty" mbarrier.
// - S = Q.K^T by wgmma m64n64k16 from shared memory (K-major Q and K), the
//   online softmax in registers (the S fragment is mma.sync's layout per
//   warp, so P is already wgmma's register A fragment), O += P.V by wgmma
//   with A from registers and V MN-major from shared memory.
// - Causal and sliding-window blocks visit only the key tiles some row can
//   see; a consumer whose rows see none of a tile waits for it and frees it.
// Not yet: ping-pong of the consumers, softmax overlapped with the next
// S = Q.K^T, masks, a persistent scheduler (kernels/README.md, GPU sections).
// Checked on an H200 (2026-12-04); taken by default where it measured ahead
// (hopper_wanted), ATTNOPT_CUDA_HOPPER=1/0 forces it on/off; flash_mma.cu
// serves everything else.
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "cuda/kernels.h"
#include "cuda/ptx.cuh"
#include "cuda/tensor_map.h"

namespace attnopt {
namespace cuda {
namespace {

constexpr int kThreads = 384;  // producer + 2 consumer warpgroups
constexpr int kBQ = 128, kBK = 64;
constexpr uint32_t kQBlock = kBQ * 128;  // bytes of Q per 64 features (128-byte rows)
constexpr uint32_t kKBlock = kBK * 128;  // bytes of a K or V tile per 64 features
constexpr int stages_for(int d) { return d == 64 ? 3 : 2; }

struct WgmmaArgs {
  CUtensorMap tq, tk, tv;
  KernelArgs a;
};

template <int D>
constexpr size_t smem_bytes() {
  return 1024 + (D / 64) * (kQBlock + 2 * stages_for(D) * kKBlock) + 8 * (1 + 3 * stages_for(D));
}

#ifdef ATTNOPT_SM90A

__device__ __forceinline__ uint64_t kmajor_desc(uint32_t addr) {
  return encode_smem_desc(SmemDesc{addr, 16u, 1024u, 0u, Swizzle::k128B});
}
#endif  // ATTNOPT_SM90A

template <typename T, int D>
__global__ void __launch_bounds__(kThreads, 1) wgmma_attention_kernel(const __grid_constant__ WgmmaArgs w) {
#ifdef ATTNOPT_SM90A
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr int NB = D / 64, S = stages_for(D);
  const KernelArgs& a = w.a;
  ATTNOPT_DYNAMIC_SMEM(unsigned char, raw);
  unsigned char* smem = raw + ((1024u - (smem_u32(raw) & 1023u)) & 1023u);  // swizzle patterns start at 1024
  unsigned char* Qs = smem;                          // NB blocks of [128 rows][64]
  unsigned char* Ks = Qs + NB * kQBlock;             // S stages of NB blocks of [64 keys][64]
  unsigned char* Vs = Ks + S * NB * kKBlock;         // the same for V
  uint64_t* bars = reinterpret_cast<uint64_t*>(Vs + S * NB * kKBlock);
  uint64_t* q_full = bars;
  uint64_t* k_full = bars + 1;
  uint64_t* v_full = bars + 1 + S;
  uint64_t* empty = bars + 1 + 2 * S;

  const int tid = threadIdx.x, wg = tid / 128;
  const int64_t b = blockIdx.z, hq = blockIdx.y, hkv = hq / a.group, q0 = static_cast<int64_t>(blockIdx.x) * kBQ;
  int64_t key_begin, key_end;
  tile_keys<false>(a, q0, kBQ, a.len_k, &key_begin, &key_end);
  const int64_t kt_begin = key_begin / kBK, kt_end = key_end > key_begin ? (key_end + kBK - 1) / kBK : kt_begin;

  if (tid == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < S; ++s) {
      mbar_init(&k_full[s], 1);
      mbar_init(&v_full[s], 1);
      mbar_init(&empty[s], 256);  // every consumer thread frees the stage
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (tid == 0) {
      mbar_arrive_expect_tx(q_full, NB * kQBlock);
      for (int db = 0; db < NB; ++db)
        tma_load_4d(Qs + db * kQBlock, &w.tq, q_full, db * 64, static_cast<int>(q0), static_cast<int>(hq),
                    static_cast<int>(b));
      for (int64_t kt = kt_begin, i = 0; kt < kt_end; ++kt, ++i) {
        const int s = static_cast<int>(i % S);
        mbar_wait(&empty[s], static_cast<unsigned>(((i / S) & 1) ^ 1));  // the first pass finds it free
        mbar_arrive_expect_tx(&k_full[s], NB * kKBlock);
        for (int db = 0; db < NB; ++db)
          tma_load_4d(Ks + (s * NB + db) * kKBlock, &w.tk, &k_full[s], db * 64, static_cast<int>(kt * kBK),
                      static_cast<int>(hkv), static_cast<int>(b));
        mbar_arrive_expect_tx(&v_full[s], NB * kKBlock);
        for (int db = 0; db < NB; ++db)
          tma_load_4d(Vs + (s * NB + db) * kKBlock, &w.tv, &v_full[s], db * 64, static_cast<int>(kt * kBK),
                      static_cast<int>(hkv), static_cast<int>(b));
      }
    }
  } else {
    setmaxnreg_inc<232>();
    const int c = wg - 1, t = tid % 128, warp = t / 32, g = (t % 32) / 4, tq = t % 4;
    const int64_t r0 = q0 + 64 * c, r1 = r0 + 63;  // this warpgroup's rows
    int64_t row[2];
    row[0] = r0 + 16 * warp + g;
    row[1] = row[0] + 8;
    float o[D / 2], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
    const float scale_log2 = a.scale * kLog2e;
    const uint32_t q_addr = smem_u32(Qs) + c * 8192u;  // row 64c of each Q block
    mbar_wait(q_full, 0);

    for (int64_t kt = kt_begin, i = 0; kt < kt_end; ++kt, ++i) {
      const int s = static_cast<int>(i % S);
      const unsigned ph = static_cast<unsigned>((i / S) & 1);
      const int64_t k0 = kt * kBK;
      bool active = r0 < a.len_q;
      if (a.band.misses(r0, r1, k0, k0 + kBK - 1)) active = false;
      // Even a consumer that skips the tile waits for it: so it frees each
      // stage once per fill, never twice in one phase of the empty barrier.
      mbar_wait(&k_full[s], ph);
      if (active) {
        float sacc[32];
        wgmma_fence();
        const uint32_t k_addr = smem_u32(Ks + s * NB * kKBlock);
#pragma unroll
        for (int ks = 0; ks < D / 16; ++ks) {
          // 16 features per step: 32 bytes along a 128-byte row, then the next 64-feature block.
          const uint32_t off = 32u * (ks % 4);
          wgmma_ss<T, 64, 0>(sacc, kmajor_desc(q_addr + (ks / 4) * kQBlock + off),
                             kmajor_desc(k_addr + (ks / 4) * kKBlock + off), ks > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();

        // Scores in base 2; element i: row (i>>1)&1, key k0 + 8(i>>2) + 2tq + (i&1).
        const bool interior = k0 + kBK <= a.len_k && a.band.covers(r0, r1, k0, k0 + kBK - 1);
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int e = 0; e < 32; ++e) {
          const int rr = (e >> 1) & 1;
          float x = sacc[e] * scale_log2;
          if (!interior) {
            const int64_t key = k0 + 8 * (e >> 2) + 2 * tq + (e & 1);
            const bool seen = row[rr] < a.len_q && key < a.len_k && a.band.admits(row[rr], key);
            if (!seen) x = -INFINITY;
          }
          sacc[e] = x;
          mx[rr] = fmaxf(mx[rr], x);
        }
        float alpha[2], mu[2];
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
          float v = mx[rr];
          v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));  // the quad shares a row
          v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
          const float m_new = fmaxf(m[rr], v);
          mu[rr] = m_new == -INFINITY ? 0.0f : m_new;  // empty row so far: p = 0, no NaN
          alpha[rr] = fast_exp2(m[rr] - mu[rr]);
          m[rr] = m_new;
        }
        uint32_t pa[4][4];  // P as wgmma's A fragments, one per 16 keys
        float ls[2] = {0.0f, 0.0f};
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int e = 8 * kk + 4 * (j >> 1) + 2 * (j & 1);
            const float p0 = fast_exp2(sacc[e] - mu[j & 1]), p1 = fast_exp2(sacc[e + 1] - mu[j & 1]);
            ls[j & 1] += p0 + p1;
            pa[kk][j] = pack2<T>(p0, p1);
          }
        l[0] = l[0] * alpha[0] + ls[0];
        l[1] = l[1] * alpha[1] + ls[1];
#pragma unroll
        for (int e = 0; e < D / 2; ++e) o[e] *= alpha[(e >> 1) & 1];

        mbar_wait(&v_full[s], ph);
        wgmma_fence();
        const uint32_t v_addr = smem_u32(Vs + s * NB * kKBlock);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)  // V MN-major: 16 keys = two 1024-byte row groups; 64 features per block
          wgmma_rs<T, D, 1>(o, pa[kk], encode_smem_desc(SmemDesc{v_addr + 2048u * kk, kKBlock, 1024u, 0u, Swizzle::k128B}),
                            1);
        wgmma_commit();
        wgmma_wait<0>();
      }
      mbar_arrive(&empty[s]);
    }

    T* O = static_cast<T*>(a.o) + b * a.os[0] + hq * a.os[1];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float lt = l[rr];
      lt += __shfl_xor_sync(0xffffffffu, lt, 1);
      lt += __shfl_xor_sync(0xffffffffu, lt, 2);
      if (row[rr] >= a.len_q) continue;
      const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;  // no admissible key: zeros
      T* orow = O + row[rr] * a.os[2];
#pragma unroll
      for (int e = 0; e < D / 2; ++e)
        if (((e >> 1) & 1) == rr) orow[(8 * (e >> 2) + 2 * tq + (e & 1)) * a.os[3]] = from_float<T>(o[e] * inv);
    }
  }
#endif  // ATTNOPT_SM90A
}

// ATTNOPT_CUDA_HOPPER: "1" takes this kernel wherever it applies, "0" never.
// Unset, it takes head dim 128, where the H200 runs of 2026-12-04 measured
// it 1.6-2.0x faster than flash_mma.cu (kernels/README.md, "GPU results").
// At 64 it was 1-3 % behind without causal and, once flash_mma.cu's ring
// became a template parameter, about even with causal: flash_mma.cu keeps 64.
bool hopper_wanted(const KernelArgs& a) {
  const char* e = std::getenv("ATTNOPT_CUDA_HOPPER");
  if (e && std::strcmp(e, "1") == 0) return true;
  if (e && std::strcmp(e, "0") == 0) return false;
  return a.dqk == 128;
}

// Q, K or V (B, H, N, D) as a 4-D tensor map, boxes of 64 features x rows.
bool operand_map(CUtensorMap* map, bool bf16, const void* base, const int64_t s[4], int64_t batch, int64_t heads,
                 int64_t n, int d, uint32_t rows) {
  const int64_t dims[4] = {d, n, heads, batch}, strides[4] = {s[3], s[2], s[1], s[0]};
  const uint32_t box[4] = {64, rows, 1, 1};
  return make_tensor_map(map, bf16, 4, base, dims, strides, box);
}

template <typename T, int D>
cudaError_t launch_d(const WgmmaArgs& w, const LaunchShape& s, cudaStream_t stream) {
  constexpr size_t smem = smem_bytes<D>();
  auto kernel = wgmma_attention_kernel<T, D>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>((s.rows + kBQ - 1) / kBQ), static_cast<unsigned>(s.heads_q),
                  static_cast<unsigned>(s.batch));
  ATTNOPT_LAUNCH(kernel, grid, kThreads, smem, stream, w);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_wgmma(attnopt_dtype dtype, bool window, const KernelArgs& a, const LaunchShape& s,
                         cudaStream_t stream) {
  // What this kernel covers; everything else goes to flash_mma.cu.
  const bool shape_ok = !window && a.mask_type == ATTNOPT_MASK_NONE && a.softcap == 0.0f && a.dqk == a.dv && (a.dqk == 64 || a.dqk == 128) &&
                        (dtype == ATTNOPT_F16 || dtype == ATTNOPT_BF16) && a.len_q < INT32_MAX && a.len_k < INT32_MAX;
  if (!shape_ok || !hopper_wanted(a) || !device_is_sm90()) return cudaErrorNotSupported;
  const bool bf16 = dtype == ATTNOPT_BF16;
  const int64_t hkv = s.heads_q / a.group;
  WgmmaArgs w{};
  w.a = a;
  if (!operand_map(&w.tq, bf16, a.q, a.qs, s.batch, s.heads_q, a.len_q, a.dqk, kBQ) ||
      !operand_map(&w.tk, bf16, a.k, a.ks, s.batch, hkv, a.len_k, a.dqk, kBK) ||
      !operand_map(&w.tv, bf16, a.v, a.vs, s.batch, hkv, a.len_k, a.dv, kBK))
    return cudaErrorNotSupported;  // TMA cannot address this layout
  if (bf16) return a.dqk == 64 ? launch_d<__nv_bfloat16, 64>(w, s, stream) : launch_d<__nv_bfloat16, 128>(w, s, stream);
  return a.dqk == 64 ? launch_d<__half, 64>(w, s, stream) : launch_d<__half, 128>(w, s, stream);
}

}  // namespace cuda
}  // namespace attnopt
