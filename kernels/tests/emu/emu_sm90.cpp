// The emulated sm_90a pieces (see include/emu_sm90.h for what each models).
// State lives per block (mbarriers, named barriers, wgmma operand snapshots)
// and per thread (wgmma results not yet waited for); emu_runtime.cpp resets
// both when a block starts.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "common/numeric.h"
#include "cuda/smem_desc.h"
#include "emu_sm90.h"

namespace attnopt_emu {

unsigned char* smem_base();
size_t smem_size();
unsigned block_threads();
void warpgroup_wait();

namespace {

using attnopt::cuda::SmemDesc;
using attnopt::cuda::Swizzle;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "emulation: %s (thread %u, block %u,%u,%u)\n", what, threadIdx.x, blockIdx.x, blockIdx.y,
               blockIdx.z);
  std::abort();
}

constexpr auto kDeadlock = std::chrono::seconds(30);  // under the block barrier's 60 s

// ---------------------------------------------------------------- TMA maps

struct EmuTensorMap {
  const unsigned char* addr;
  uint32_t rank, esize;
  uint64_t dims[5], strides[5];  // strides in bytes, strides[0] = esize
  uint32_t box[5];
  Swizzle swizzle;
  uint32_t magic;
};
static_assert(sizeof(EmuTensorMap) <= sizeof(CUtensorMap), "emulated tensor map must fit the opaque bytes");
constexpr uint32_t kMapMagic = 0x544d4150u;

Swizzle map_swizzle(CUtensorMapSwizzle s) {
  switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return Swizzle::k32B;
    case CU_TENSOR_MAP_SWIZZLE_64B: return Swizzle::k64B;
    case CU_TENSOR_MAP_SWIZZLE_128B: return Swizzle::k128B;
    default: return Swizzle::kNone;
  }
}

// ---------------------------------------------------------------- mbarriers

struct Copy {  // one TMA box copy that lands when its barrier's phase completes
  EmuTensorMap map;
  int coords[5];
  uint32_t dst;  // shared-memory offset of the box
};

struct MBar {
  unsigned expected = 0, pending = 0;
  int64_t tx = 0;      // bytes expected by arrive.expect_tx and not yet landed
  uint64_t phase = 0;  // completed phases
  bool ready = false;  // every arrival and byte of the phase is in; it completes when next observed
  std::vector<Copy> copies;
};

std::mutex g_mu;  // guards the block's mbarriers and named barriers
std::condition_variable g_cv;
std::map<uint32_t, MBar> g_bars;

uint32_t box_bytes(const EmuTensorMap& m) {
  uint32_t n = m.esize;
  for (uint32_t i = 0; i < m.rank; ++i) n *= m.box[i];
  return n;
}

// Calls f(element index in the box, byte offset of its global element or -1 out of range).
template <typename F>
void for_box(const EmuTensorMap& m, const int* coords, F f) {
  uint32_t idx[5] = {0, 0, 0, 0, 0};
  const uint32_t total = box_bytes(m) / m.esize;
  for (uint32_t e = 0; e < total; ++e) {
    int64_t off = 0;
    bool in = true;
    for (uint32_t i = 0; i < m.rank; ++i) {
      const int64_t c = static_cast<int64_t>(coords[i]) + idx[i];
      if (c < 0 || c >= static_cast<int64_t>(m.dims[i])) in = false;
      off += c * static_cast<int64_t>(m.strides[i]);
    }
    f(e, in ? off : -1);
    for (uint32_t i = 0; i < m.rank && ++idx[i] == m.box[i]; ++i) idx[i] = 0;
  }
}

void land(const Copy& c) {
  unsigned char* s = smem_base();
  for_box(c.map, c.coords, [&](uint32_t e, int64_t off) {
    const uint32_t phys = attnopt::cuda::swizzle_address(c.dst + e * c.map.esize, c.map.swizzle);
    if (off < 0) std::memset(s + phys, 0, c.map.esize);  // out of range: zero fill
    else std::memcpy(s + phys, c.map.addr + off, c.map.esize);
  });
}

// Notes when every arrival is in and every expected byte issued. The phase
// then completes, and its copies land, as late as the hardware may let it:
// when a thread next waits on or arrives at the barrier. Until then the
// destinations hold NaN, so a consumer that reads without waiting fails even
// when the producer issued long before.
void check_ready(MBar& b) {
  if (b.pending) return;
  int64_t issued = 0;
  for (const Copy& c : b.copies) issued += box_bytes(c.map);
  if (issued > b.tx) fail("mbarrier: more TMA bytes than arrive.expect_tx announced (phase would end early)");
  b.ready = issued == b.tx;  // else more copies are still to be issued
  if (b.ready) g_cv.notify_all();  // a waiter completes it
}

void complete_if_ready(MBar& b) {
  if (!b.ready) return;
  for (const Copy& c : b.copies) land(c);
  b.copies.clear();
  b.tx = 0;
  b.pending = b.expected;
  b.ready = false;
  ++b.phase;
  g_cv.notify_all();
}

MBar& bar_at(uint64_t* bar) {
  auto it = g_bars.find(smem_offset(bar));
  if (it == g_bars.end()) fail("mbarrier used before mbarrier.init");
  return it->second;
}

// ---------------------------------------------------------------- named barriers

struct Named {
  int expected = 0, count = 0;
  uint64_t gen = 0;
};
Named g_named[16];

// ---------------------------------------------------------------- wgmma

struct WgStage {
  uint64_t a[128], b[128];
  uint32_t aregs[128][4];
  int n[128], scale[128];
  bool mn[128];
  float A[64][16], B[16][256];
};
struct Snapshot {  // shared-memory operands as read at issue, checked again at the wait
  long group;
  uint64_t a, b;
  bool ss, mn, bf16;
  int n;
  std::vector<float> A, B;
};
std::vector<WgStage> g_wg;
std::vector<std::vector<Snapshot>> g_snaps;

struct Pending {
  long group;
  float* d;
  std::vector<float> vals;
};
thread_local long t_wg_committed = 0;
thread_local bool t_fenced = false;
thread_local std::vector<Pending> t_pending;

float read16(uint32_t addr, Swizzle sw, bool bf16) {
  const uint32_t phys = attnopt::cuda::swizzle_address(addr, sw);
  if (phys + 2 > smem_size()) fail("wgmma operand outside shared memory");
  uint16_t bits;
  std::memcpy(&bits, smem_base() + phys, 2);
  return bf16 ? attnopt::bf16_to_float(bits) : attnopt::half_to_float(bits);
}

SmemDesc checked(uint64_t x) {
  const SmemDesc d = attnopt::cuda::decode_smem_desc(x);
  if (d.base_offset != 0) fail("wgmma descriptor with a base offset (not emulated: align tiles to the pattern)");
  return d;
}

// A (64 x 16, K-major) and B (16 x n) through their descriptors.
void decode(uint64_t a, uint64_t b, bool mn, int n, bool bf16, float* A, float* B, bool with_a) {
  if (with_a) {
    const SmemDesc da = checked(a);
    for (uint32_t r = 0; r < 64; ++r)
      for (uint32_t k = 0; k < 16; ++k) A[r * 16 + k] = read16(attnopt::cuda::operand_address(da, false, r, k), da.swizzle, bf16);
  }
  const SmemDesc db = checked(b);
  for (uint32_t k = 0; k < 16; ++k)
    for (uint32_t c = 0; c < static_cast<uint32_t>(n); ++c)
      B[k * 256 + c] = read16(attnopt::cuda::operand_address(db, mn, c, k), db.swizzle, bf16);
}

unsigned wg_thread() { return threadIdx.x % 128; }
WgStage& stage() { return g_wg[threadIdx.x / 128]; }

}  // namespace

void sm90_block_begin(unsigned threads) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_bars.clear();
  for (Named& n : g_named) n = Named{};
  g_wg.assign(threads / 128, WgStage{});
  g_snaps.assign(threads / 128, {});
}

void sm90_thread_begin() {
  t_wg_committed = 0;
  t_fenced = false;
  t_pending.clear();
}

uint32_t smem_offset(const void* p) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  if (c < smem_base() || c >= smem_base() + smem_size()) fail("shared-memory address outside the block's shared memory");
  return static_cast<uint32_t>(c - smem_base());
}

void mbar_init(uint64_t* bar, unsigned count) {
  if (smem_offset(bar) % 8) fail("mbarrier not 8-byte aligned");
  std::lock_guard<std::mutex> lock(g_mu);
  MBar& b = g_bars[smem_offset(bar)];
  b = MBar{};
  b.expected = b.pending = count;
}

void mbar_arrive(uint64_t* bar, unsigned tx_bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  MBar& b = bar_at(bar);
  complete_if_ready(b);  // the previous phase, if nobody waited for it
  if (b.pending == 0) fail("mbarrier: arrival beyond the expected count");
  b.tx += tx_bytes;
  --b.pending;
  check_ready(b);
}

void mbar_wait(uint64_t* bar, unsigned parity) {
  std::unique_lock<std::mutex> lock(g_mu);
  MBar& b = bar_at(bar);
  // try_wait.parity P succeeds once the current phase's parity differs from P.
  if (!g_cv.wait_for(lock, kDeadlock, [&] {
        complete_if_ready(b);
        return (b.phase & 1u) != (parity & 1u);
      })) {
    std::fprintf(stderr, "emulation: mbarrier at %u: parity %u, phase %llu, %u arrivals and %lld bytes missing\n",
                 smem_offset(bar), parity, static_cast<unsigned long long>(b.phase), b.pending,
                 static_cast<long long>(b.tx));
    fail("mbarrier wait: the phase never completed (deadlock, or fewer TMA bytes than expected)");
  }
}

void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, const int* coords, int rank) {
  Copy c;
  std::memcpy(&c.map, map, sizeof(EmuTensorMap));
  if (c.map.magic != kMapMagic) fail("TMA with a tensor map not made by cuTensorMapEncodeTiled");
  if (static_cast<int>(c.map.rank) != rank) fail("TMA coordinates do not match the tensor map's rank");
  for (int i = 0; i < rank; ++i) c.coords[i] = coords[i];
  c.dst = smem_offset(dst);
  const uint32_t align = c.map.swizzle == Swizzle::kNone ? 16u : 8u * attnopt::cuda::swizzle_bytes(c.map.swizzle);
  if (c.dst % align) fail("TMA destination not aligned to its swizzle pattern");
  if (c.dst + box_bytes(c.map) > smem_size()) fail("TMA box past the end of shared memory");
  std::lock_guard<std::mutex> lock(g_mu);
  // NaN until the phase completes: a consumer that reads before waiting, or a
  // producer that overwrites a stage still being read, gets NaN.
  for_box(c.map, c.coords, [&](uint32_t e, int64_t) {
    std::memset(smem_base() + attnopt::cuda::swizzle_address(c.dst + e * c.map.esize, c.map.swizzle), 0xff, c.map.esize);
  });
  MBar& b = bar_at(bar);
  if (b.ready) fail("TMA on an mbarrier whose phase has all its bytes (missing arrive.expect_tx?)");
  b.copies.push_back(c);
  check_ready(b);
}

void named_bar(int id, int nthreads, bool wait) {
  if (id <= 0 || id >= 16 || nthreads % 32 || nthreads <= 0) fail("named barrier id 1..15, thread count a multiple of 32");
  std::unique_lock<std::mutex> lock(g_mu);
  Named& n = g_named[id];
  if (n.expected == 0) n.expected = nthreads;
  if (n.expected != nthreads) fail("named barrier used with two thread counts at once");
  const uint64_t gen = n.gen;
  if (++n.count == n.expected) {
    n.count = n.expected = 0;
    ++n.gen;
    g_cv.notify_all();
  } else if (wait && !g_cv.wait_for(lock, kDeadlock, [&] { return n.gen != gen; })) {
    fail("named barrier waited 60 s (deadlock)");
  }
}

void wgmma_fence() { t_fenced = true; }
void wgmma_commit() { ++t_wg_committed; }

void wgmma(float* d, int n, uint64_t a, const uint32_t* a_regs, uint64_t b, bool b_mn_major, int scale_d, bool bf16) {
  if (!t_fenced) fail("wgmma.mma_async without a wgmma.fence since the last wgmma.wait_group");
  WgStage& w = stage();
  const unsigned t = wg_thread();
  w.a[t] = a;
  w.b[t] = b;
  w.n[t] = n;
  w.scale[t] = scale_d;
  w.mn[t] = b_mn_major;
  if (a_regs) std::memcpy(w.aregs[t], a_regs, sizeof(w.aregs[t]));
  warpgroup_wait();
  if (t == 0) {
    for (unsigned u = 1; u < 128; ++u)
      if (w.a[u] != a || w.b[u] != b || w.n[u] != n || w.scale[u] != scale_d || w.mn[u] != b_mn_major)
        fail("wgmma.mma_async operands differ across the warpgroup");
    if (a_regs) {
      // A fragment per warp as in mma.sync: reg j holds row g + 8(j&1), columns 2t + 8(j>>1) + {0,1}.
      for (unsigned u = 0; u < 128; ++u) {
        const unsigned wp = u / 32, g = (u % 32) / 4, tq = u % 4;
        for (int j = 0; j < 4; ++j)
          for (int h = 0; h < 2; ++h) {
            const uint16_t bits = static_cast<uint16_t>(w.aregs[u][j] >> (16 * h));
            w.A[16 * wp + g + 8 * (j & 1)][2 * tq + 8 * (j >> 1) + h] =
                bf16 ? attnopt::bf16_to_float(bits) : attnopt::half_to_float(bits);
          }
      }
    }
    decode(a, b, b_mn_major, n, bf16, &w.A[0][0], &w.B[0][0], a_regs == nullptr);
    Snapshot s{t_wg_committed, a, b, a_regs == nullptr, b_mn_major, bf16, n, {}, {}};
    if (s.ss) s.A.assign(&w.A[0][0], &w.A[0][0] + 64 * 16);
    s.B.assign(&w.B[0][0], &w.B[0][0] + 16 * 256);
    g_snaps[threadIdx.x / 128].push_back(std::move(s));
  }
  warpgroup_wait();
  // This thread's part of D (64 x n): warp wp holds rows 16 wp.., element i
  // is row g + 8((i>>1)&1), column 8(i>>2) + 2t + (i&1).
  const float* cur = d;
  for (auto it = t_pending.rbegin(); it != t_pending.rend(); ++it)
    if (it->d == d) {  // chained on a result still in flight: the hardware accumulates in order
      cur = it->vals.data();
      break;
    }
  const unsigned wp = t / 32, g = (t % 32) / 4, tq = t % 4;
  Pending p{t_wg_committed, d, std::vector<float>(n / 2)};
  for (int i = 0; i < n / 2; ++i) {
    const unsigned row = 16 * wp + g + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * tq + (i & 1);
    float acc = scale_d ? cur[i] : 0.0f;
    for (int k = 0; k < 16; ++k) acc += w.A[row][k] * w.B[k][col];
    p.vals[i] = acc;
  }
  t_pending.push_back(std::move(p));
  for (int i = 0; i < n / 2; ++i) d[i] = NAN;  // the registers are the hardware's until the wait
  warpgroup_wait();
}

void wgmma_wait(int pending) {
  warpgroup_wait();
  const long done = t_wg_committed - pending;
  if (wg_thread() == 0) {
    std::vector<Snapshot>& snaps = g_snaps[threadIdx.x / 128];
    std::vector<float> A(64 * 256), B(16 * 256);
    size_t keep = 0;
    for (size_t i = 0; i < snaps.size(); ++i) {
      Snapshot& s = snaps[i];
      if (s.group >= done) {
        snaps[keep++] = std::move(s);
        continue;
      }
      decode(s.a, s.b, s.mn, s.n, s.bf16, A.data(), B.data(), s.ss);
      for (int k = 0; k < 16; ++k)
        for (int c = 0; c < s.n; ++c)
          if (std::memcmp(&B[k * 256 + c], &s.B[k * 256 + c], 4)) fail("shared memory under an in-flight wgmma changed");
      if (s.ss && std::memcmp(A.data(), s.A.data(), 64 * 16 * 4)) fail("shared memory under an in-flight wgmma changed");
    }
    snaps.resize(keep);
  }
  size_t keep = 0;
  for (size_t i = 0; i < t_pending.size(); ++i) {
    Pending& p = t_pending[i];
    if (p.group < done) std::memcpy(p.d, p.vals.data(), p.vals.size() * sizeof(float));
    else t_pending[keep++] = std::move(p);
  }
  t_pending.resize(keep);
  t_fenced = false;
  warpgroup_wait();
}

CUresult tensor_map_encode(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* addr,
                           const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                           const cuuint32_t* elem_strides, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                           CUtensorMapL2promotion, CUtensorMapFloatOOBfill oob) {
  // The driver's documented limits (cuTensorMapEncodeTiled), for what the kernels use.
  EmuTensorMap m{};
  m.esize = type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ? 2u
            : type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32                                          ? 4u
                                                                                               : 0u;
  if (!m.esize || rank < 1 || rank > 5 || reinterpret_cast<uintptr_t>(addr) % 16 || il != CU_TENSOR_MAP_INTERLEAVE_NONE ||
      oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  m.addr = static_cast<const unsigned char*>(addr);
  m.rank = rank;
  m.swizzle = map_swizzle(sw);
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > (1ull << 32) || box[i] == 0 || box[i] > 256 || elem_strides[i] != 1)
      return CUDA_ERROR_INVALID_VALUE;
    m.dims[i] = dims[i];
    m.box[i] = box[i];
    m.strides[i] = i == 0 ? m.esize : strides[i - 1];
    if (i > 0 && (m.strides[i] % 16 || m.strides[i] >= (1ull << 40))) return CUDA_ERROR_INVALID_VALUE;
  }
  const uint32_t inner = box[0] * m.esize;
  if (inner % 16 || (m.swizzle != Swizzle::kNone && inner > attnopt::cuda::swizzle_bytes(m.swizzle)))
    return CUDA_ERROR_INVALID_VALUE;
  m.magic = kMapMagic;
  std::memset(map, 0, sizeof(*map));
  std::memcpy(map, &m, sizeof(m));
  return CUDA_SUCCESS;
}

}  // namespace attnopt_emu

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int, unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
  const bool found = std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
  *fn = found ? reinterpret_cast<void*>(&attnopt_emu::tensor_map_encode) : nullptr;
  if (status) *status = found ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}
