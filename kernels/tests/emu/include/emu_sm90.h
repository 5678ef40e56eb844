// CPU emulation of the sm_90a PTX of the Hopper path (see src/cuda/ptx_sm90.cuh
// for the real one), written from the PTX ISA:
// - mbarrier: phases, arrival counts and transaction bytes; try_wait.parity
//   blocks until the phase of that parity completes (or aborts on a deadlock);
// - TMA tile loads: a box copy with the tensor map's swizzle and zero fill
//   out of range; the destination holds NaN bytes from the issue until the
//   barrier's phase completes, when the bytes land;
// - wgmma: warpgroup-collective, operands read through the descriptors
//   (smem_desc.h) and the fragment layouts; the result reaches the
//   accumulator registers only at the wgmma.wait_group that covers it (they
//   hold NaN until then), shared-memory operands must not change before that
//   wait, and an mma_async needs a wgmma.fence since the thread's last wait;
// - named barriers (bar.sync / bar.arrive) and setmaxnreg (no effect).
#ifndef ATTNOPT_EMU_SM90_H_
#define ATTNOPT_EMU_SM90_H_

#include <cstdint>
#include <type_traits>

#include "cuda.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_runtime.h"

namespace attnopt_emu {
uint32_t smem_offset(const void* p);
void mbar_init(uint64_t* bar, unsigned count);
void mbar_arrive(uint64_t* bar, unsigned tx_bytes);
void mbar_wait(uint64_t* bar, unsigned parity);
void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, const int* coords, int rank);
void named_bar(int id, int nthreads, bool wait);
void wgmma_fence();
void wgmma_commit();
void wgmma_wait(int pending);
// One wgmma.mma_async of the calling thread: a (SS, descriptor) or a_regs (RS).
void wgmma(float* d, int n, uint64_t a, const uint32_t* a_regs, uint64_t b, bool b_mn_major, int scale_d,
           bool bf16);
CUresult tensor_map_encode(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* addr,
                           const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                           const cuuint32_t* elem_strides, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                           CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob);
}  // namespace attnopt_emu

enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
constexpr unsigned long long cudaEnableDefault = 0;
cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int version,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* status);

namespace attnopt {
namespace cuda {

template <typename T> struct Tag {};

inline uint32_t smem_u32(const void* p) { return attnopt_emu::smem_offset(p); }
inline void mbar_init(uint64_t* bar, unsigned count) { attnopt_emu::mbar_init(bar, count); }
inline void mbar_fence_init() {}
inline void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes) { attnopt_emu::mbar_arrive(bar, bytes); }
inline void mbar_arrive(uint64_t* bar) { attnopt_emu::mbar_arrive(bar, 0); }
inline void mbar_wait(uint64_t* bar, unsigned parity) { attnopt_emu::mbar_wait(bar, parity); }
inline void tma_load_4d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2, int c3) {
  const int c[4] = {c0, c1, c2, c3};
  attnopt_emu::tma_load(dst, map, bar, c, 4);
}
inline void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  const int c[2] = {c0, c1};
  attnopt_emu::tma_load(dst, map, bar, c, 2);
}
inline void tma_prefetch_map(const CUtensorMap*) {}
inline void fence_proxy_async() {}
inline void named_bar_sync(int id, int nthreads) { attnopt_emu::named_bar(id, nthreads, true); }
inline void named_bar_arrive(int id, int nthreads) { attnopt_emu::named_bar(id, nthreads, false); }
template <int R> inline void setmaxnreg_inc() { static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg"); }
template <int R> inline void setmaxnreg_dec() { static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg"); }
inline void wgmma_fence() { attnopt_emu::wgmma_fence(); }
inline void wgmma_commit() { attnopt_emu::wgmma_commit(); }
template <int N> inline void wgmma_wait() { attnopt_emu::wgmma_wait(N); }
template <typename T, int N, int TB>
inline void wgmma_ss(float (&d)[N / 2], uint64_t a, uint64_t b, int scale_d) {
  attnopt_emu::wgmma(d, N, a, nullptr, b, TB != 0, scale_d, std::is_same<T, __nv_bfloat16>::value);
}
template <typename T, int N, int TB>
inline void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b, int scale_d) {
  attnopt_emu::wgmma(d, N, 0, a, b, TB != 0, scale_d, std::is_same<T, __nv_bfloat16>::value);
}

}  // namespace cuda
}  // namespace attnopt

#endif  // ATTNOPT_EMU_SM90_H_
