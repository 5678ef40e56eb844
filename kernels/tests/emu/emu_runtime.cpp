// The CUDA emulation runtime: runs each block with one std::thread per CUDA
// thread (blocks one after another), blocking barriers for __syncthreads and
// per-warp barriers for __syncwarp, shuffles, ldmatrix and mma.sync. Shared
// memory is refilled with NaN bytes before every block, so a kernel that
// reads shared memory it did not write gets NaN outputs, and it is allocated
// at exactly the launch's size, so AddressSanitizer catches overruns.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "cuda_runtime.h"
#include "emu_ptx.h"

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;

namespace attnopt_emu {
namespace {

class Barrier {
 public:
  explicit Barrier(unsigned n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const unsigned gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return gen != gen_; })) {
      std::fprintf(stderr, "emulation: barrier of %u threads waited 60 s (deadlock)\n", n_);
      std::abort();
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned n_, count_ = 0, gen_ = 0;
};

// Per-warp exchange area for the collectives.
struct Stage {
  const void* addr[32];
  uint32_t words[32][6];
  float f[32];
  int flag[32];
};

// One thread's cp.async copies not yet waited for, with their commit group.
struct PendingCopy {
  void* dst;
  const void* src;
  unsigned bytes;
  long group;
};
thread_local std::vector<PendingCopy> t_copies;
thread_local long t_committed = 0;  // commit groups closed so far in this block

}  // namespace

// Per-block and per-thread state of the Hopper pieces (emu_sm90.cpp).
void sm90_block_begin(unsigned threads);
void sm90_thread_begin();

namespace {

struct AlignedDelete {
  void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t(1024)); }
};

struct Grid {
  explicit Grid(unsigned threads, size_t smem_bytes)
      : block(threads),
        smem_size(smem_bytes ? smem_bytes : 16),
        smem(static_cast<unsigned char*>(::operator new[](smem_size, std::align_val_t(1024)))) {
    for (unsigned w = 0; w < (threads + 31) / 32; ++w) warps.emplace_back(new Barrier(32));
    for (unsigned w = 0; w < threads / 128; ++w) warpgroups.emplace_back(new Barrier(128));
    stages.resize(warps.size());
  }
  Barrier block;
  std::vector<std::unique_ptr<Barrier>> warps;
  std::vector<std::unique_ptr<Barrier>> warpgroups;  // 4 consecutive warps each
  std::vector<Stage> stages;
  size_t smem_size;
  std::unique_ptr<unsigned char[], AlignedDelete> smem;
};

Grid* g_grid = nullptr;
int g_cc_major = 8;
int g_smem_optin = 227 * 1024;
int g_max_dynamic = 0;

unsigned lane() { return threadIdx.x % 32; }
unsigned warp() { return threadIdx.x / 32; }
void warp_wait() { g_grid->warps[warp()]->wait(); }
Stage& stage() { return g_grid->stages[warp()]; }

float element(uint32_t word, int half, bool bf16) {
  const uint16_t bits = static_cast<uint16_t>(word >> (16 * half));
  return bf16 ? attnopt::bf16_to_float(bits) : attnopt::half_to_float(bits);
}

}  // namespace

void set_device(int cc_major, int smem_optin) {
  g_cc_major = cc_major;
  g_smem_optin = smem_optin;
}

void* dynamic_smem() { return g_grid->smem.get(); }
unsigned char* smem_base() { return g_grid->smem.get(); }
size_t smem_size() { return g_grid->smem_size; }
unsigned block_threads() { return static_cast<unsigned>(g_grid->warps.size() * 32); }
void warpgroup_wait() {
  if (threadIdx.x / 128 >= g_grid->warpgroups.size()) {
    std::fprintf(stderr, "emulation: warpgroup collective in a block of %u threads\n", block_threads());
    std::abort();
  }
  g_grid->warpgroups[threadIdx.x / 128]->wait();
}

cudaError_t set_max_dynamic_smem(int bytes) {
  if (bytes > g_smem_optin) return cudaErrorInvalidValue;  // as the driver would refuse it
  g_max_dynamic = bytes;
  return cudaSuccess;
}

namespace {
unsigned g_last_threads = 0;
}
unsigned last_launch_threads() { return g_last_threads; }

void run_grid(dim3 grid, unsigned threads, size_t smem, const std::function<void()>& body) {
  g_last_threads = threads;
  // A launch may use 48 KiB of dynamic shared memory, more only after an opt-in.
  const size_t limit = g_max_dynamic > 48 * 1024 ? static_cast<size_t>(g_max_dynamic) : 48 * 1024;
  g_max_dynamic = 0;
  if (smem > limit) {
    std::fprintf(stderr, "emulation: launch with %zu bytes of dynamic shared memory, limit %zu\n", smem, limit);
    std::abort();
  }
  Grid g(threads, smem);
  g_grid = &g;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
          for (unsigned x = 0; x < grid.x; ++x) {
            blockIdx = {x, y, z};
            t_copies.clear();  // a block may exit with copies in flight; they die with it
            t_committed = 0;
            sm90_thread_begin();
            if (t == 0) {
              std::memset(g.smem.get(), 0xff, g.smem_size);  // NaN in f32, f16, bf16
              sm90_block_begin(threads);
            }
            g.block.wait();
            body();
            g.block.wait();  // the whole block is done before the next one starts
          }
    });
  }
  for (auto& th : pool) th.join();
  g_grid = nullptr;
}

// ldmatrix .x4: lanes 8m..8m+7 hold the row addresses of matrix m; lane l
// gets row l/4, columns 2(l%4) and 2(l%4)+1 (with .trans: of the transpose).
void ldmatrix_x4(uint32_t (&r)[4], const void* row_address, bool trans) {
  if (reinterpret_cast<uintptr_t>(row_address) % 16) {  // each row must be 16-byte aligned
    std::fprintf(stderr, "emulation: misaligned ldmatrix row %p\n", row_address);
    std::abort();
  }
  Stage& s = stage();
  s.addr[lane()] = row_address;
  warp_wait();
  const unsigned g = lane() / 4, t = lane() % 4;
  for (int m = 0; m < 4; ++m) {
    uint16_t lo, hi;
    if (!trans) {
      const uint16_t* row = static_cast<const uint16_t*>(s.addr[m * 8 + g]);
      lo = row[2 * t];
      hi = row[2 * t + 1];
    } else {
      lo = static_cast<const uint16_t*>(s.addr[m * 8 + 2 * t])[g];
      hi = static_cast<const uint16_t*>(s.addr[m * 8 + 2 * t + 1])[g];
    }
    r[m] = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
  }
  warp_wait();
}

// mma.sync.m16n8k16.row.col with the PTX fragment layouts (groupID g = l/4,
// threadID_in_group t = l%4): A reg j holds row g + 8(j&1), columns
// 2t + 8(j>>1) + {0,1}; B reg j holds rows 2t + 8j + {0,1} of column g;
// C/D element e is row g + 8(e>>1), column 2t + (e&1).
void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, bool bf16) {
  Stage& s = stage();
  for (int j = 0; j < 4; ++j) s.words[lane()][j] = a[j];
  s.words[lane()][4] = b0;
  s.words[lane()][5] = b1;
  warp_wait();
  float A[16][16], B[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned g = l / 4, t = l % 4;
    for (int j = 0; j < 4; ++j)
      for (int h = 0; h < 2; ++h) A[g + 8 * (j & 1)][2 * t + 8 * (j >> 1) + h] = element(s.words[l][j], h, bf16);
    for (int j = 0; j < 2; ++j)
      for (int h = 0; h < 2; ++h) B[2 * t + 8 * j + h][g] = element(s.words[l][4 + j], h, bf16);
  }
  const unsigned g = lane() / 4, t = lane() % 4;
  for (int e = 0; e < 4; ++e) {
    const unsigned row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
    float acc = d[e];
    for (int k = 0; k < 16; ++k) acc += A[row][k] * B[k][col];
    d[e] = acc;
  }
  warp_wait();
}

void cp_async(void* smem, const void* gmem, unsigned bytes) {
  std::memset(smem, 0xff, bytes);  // NaN until the wait that covers this copy
  t_copies.push_back({smem, gmem, bytes, t_committed});
}

void cp_async_commit() { ++t_committed; }

// cp.async.wait_group N: every commit group but the newest N is complete;
// copies issued after the last commit belong to no group yet and stay pending
// (wait_group 0 and wait_all differ only there; the kernels commit first).
void cp_async_wait(int pending) {
  const long done = t_committed - pending;
  size_t keep = 0;
  for (size_t i = 0; i < t_copies.size(); ++i) {
    const PendingCopy& c = t_copies[i];
    if (c.group < done) std::memcpy(c.dst, c.src, c.bytes);
    else t_copies[keep++] = c;
  }
  t_copies.resize(keep);
}

}  // namespace attnopt_emu

void __syncthreads() { attnopt_emu::g_grid->block.wait(); }
void __syncwarp(unsigned) { attnopt_emu::warp_wait(); }

float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  attnopt_emu::Stage& s = attnopt_emu::stage();
  s.f[attnopt_emu::lane()] = v;
  attnopt_emu::warp_wait();
  const float r = s.f[attnopt_emu::lane() ^ static_cast<unsigned>(lane_mask)];
  attnopt_emu::warp_wait();
  return r;
}

namespace {
// Gathers one int per lane and returns the 32 of them to every lane.
template <typename F>
auto warp_vote(int v, F reduce) {
  attnopt_emu::Stage& s = attnopt_emu::stage();
  s.flag[attnopt_emu::lane()] = v;
  attnopt_emu::warp_wait();
  const auto r = reduce(s.flag);
  attnopt_emu::warp_wait();
  return r;
}
}  // namespace

int __all_sync(unsigned, int p) {
  return warp_vote(p, [](const int* f) { int r = 1; for (int l = 0; l < 32; ++l) r &= f[l] != 0; return r; });
}
int __any_sync(unsigned, int p) {
  return warp_vote(p, [](const int* f) { int r = 0; for (int l = 0; l < 32; ++l) r |= f[l] != 0; return r; });
}
unsigned __ballot_sync(unsigned, int p) {
  return warp_vote(p, [](const int* f) {
    unsigned r = 0;
    for (int l = 0; l < 32; ++l) r |= static_cast<unsigned>(f[l] != 0) << l;
    return r;
  });
}

cudaError_t cudaGetDevice(int* dev) {
  *dev = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrComputeCapabilityMajor   ? attnopt_emu::g_cc_major
           : attr == cudaDevAttrComputeCapabilityMinor ? 0
                                                       : attnopt_emu::g_smem_optin;
  return cudaSuccess;
}

namespace {
thread_local cudaError_t g_pending = cudaSuccess;  // attnopt_emu::fail_next_launch
}  // namespace

void attnopt_emu::fail_next_launch(cudaError_t err) { g_pending = err; }

cudaError_t cudaGetLastError() {
  const cudaError_t e = g_pending;
  g_pending = cudaSuccess;
  return e;
}

const char* cudaGetErrorString(cudaError_t err) {
  switch (err) {
    case cudaSuccess: return "no error";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unrecognized error code";
  }
}
