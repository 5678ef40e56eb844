// Hopper pieces on the CPU emulation (test_cuda_emu hopper): the descriptor
// encoder and swizzle (pure functions, against values worked out by hand
// from the PTX ISA), TMA box copies with swizzle and zero fill, mbarrier
// phases, named barriers, wgmma results held back until wait_group, and the
// micro-GEMM (src/cuda/wgmma_gemm.cu) against a float64 product. The
// attention kernel's cases run from test_cuda_emu.cpp on the Hopper profile.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cuda/kernels.h"
#include "cuda/ptx_sm90.cuh"
#include "cuda/smem_desc.h"
#include "cuda/tensor_map.h"
#include "test_util.h"

using namespace attnopt::cuda;

namespace {

void descriptor_tests() {
  // start 0x400, LBO 16, SBO 1024, 128B: fields (0x400 >> 4), (16 >> 4) << 16, (1024 >> 4) << 32, 1 << 62.
  const uint64_t x = encode_smem_desc(SmemDesc{0x400, 16, 1024, 0, Swizzle::k128B});
  EXPECT_TRUE(x == 0x4000004000010040ull, "descriptor %llx", static_cast<unsigned long long>(x));
  const uint64_t y = encode_smem_desc(SmemDesc{0x12340, 8192, 256, 3, Swizzle::k32B});
  const SmemDesc d = decode_smem_desc(y);
  EXPECT_TRUE(d.start == 0x12340 && d.lbo == 8192 && d.sbo == 256 && d.base_offset == 3 && d.swizzle == Swizzle::k32B,
              "descriptor round trip");
  EXPECT_TRUE((y >> 62) == 3 && ((y >> 49) & 7) == 3, "swizzle and base offset bits");
  // 128B: chunk (bits 4-6) ^= row in the 8-row pattern (bits 7-9).
  EXPECT_TRUE(swizzle_address(0x080, Swizzle::k128B) == 0x090, "128B row 1 chunk 0");
  EXPECT_TRUE(swizzle_address(0x3f2, Swizzle::k128B) == 0x382, "128B row 7 chunk 7");
  EXPECT_TRUE(swizzle_address(0x480, Swizzle::k128B) == 0x490, "128B pattern repeats every 1024 bytes");
  EXPECT_TRUE(swizzle_address(0x180, Swizzle::k64B) == 0x1b0, "64B: 2 bits");
  EXPECT_TRUE(swizzle_address(0x180, Swizzle::k32B) == 0x190, "32B: 1 bit");
  EXPECT_TRUE(swizzle_address(0x180, Swizzle::kNone) == 0x180, "no swizzle");
  // Canonical layouts (16-bit elements).
  const SmemDesc k128{0x1000, 16, 1024, 0, Swizzle::k128B};
  EXPECT_TRUE(operand_address(k128, false, 9, 3) == 0x1000 + 1024 + 128 + 6, "K-major 128B");
  const SmemDesc mn128{0x1000, 8192, 1024, 0, Swizzle::k128B};
  EXPECT_TRUE(operand_address(mn128, true, 70, 9) == 0x1000 + 8192 + 12 + 1024 + 128, "MN-major 128B");
  const SmemDesc kn{0, 128, 256, 0, Swizzle::kNone};
  EXPECT_TRUE(operand_address(kn, false, 9, 10) == 256 + 16 + 128 + 4, "K-major interleaved");
  const SmemDesc mnn{0, 128, 256, 0, Swizzle::kNone};
  EXPECT_TRUE(operand_address(mnn, true, 9, 10) == 256 + 2 + 128 + 32, "MN-major interleaved");
}

// ---- TMA, mbarrier and named-barrier kernels (emulation only) ----

struct TmaArgs {
  CUtensorMap map;
  int c0, c1;
  uint16_t* out;          // the box as it lies in shared memory (swizzled)
  int* nan_before_wait;   // a destination byte read between issue and wait
  int* early_parity_ok;   // wait(parity 1) on a fresh barrier returned
};

constexpr int kBoxCols = 64, kBoxRows = 16;

void tma_kernel(TmaArgs t) {
  ATTNOPT_DYNAMIC_SMEM(unsigned char, smem);
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem + 4096);
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    mbar_wait(bar, 1);  // the phase before the first counts as complete
    *t.early_parity_ok = 1;
    mbar_arrive_expect_tx(bar, kBoxCols * kBoxRows * 2);
    tma_load_2d(smem, &t.map, bar, t.c0, t.c1);
    *t.nan_before_wait = smem[0] == 0xff && smem[2047] == 0xff;
  }
  __syncthreads();
  mbar_wait(bar, 0);
  if (threadIdx.x == 0) std::memcpy(t.out, smem, kBoxCols * kBoxRows * 2);
}

void tma_tests() {
  attnopt_emu::set_device(9, 227 * 1024);
  const int rows = 20, cols = 100;  // a 20 x 100 tensor; the box hangs over its edges
  std::vector<uint16_t> g(static_cast<size_t>(rows) * 104);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < 104; ++c) g[r * 104 + c] = static_cast<uint16_t>(1 + r * 1000 + c);
  std::vector<uint16_t> out(kBoxCols * kBoxRows);
  int nan_before = 0, early = 0;
  TmaArgs t{};
  const int64_t dims[2] = {cols, rows}, strides[2] = {1, 104};  // row pitch 208 bytes
  const uint32_t box[2] = {kBoxCols, kBoxRows};
  EXPECT_TRUE(make_tensor_map(&t.map, false, 2, g.data(), dims, strides, box), "tensor map");
  const int64_t bad_strides[2] = {1, 100};  // 200-byte pitch: not a multiple of 16
  CUtensorMap bad;
  EXPECT_TRUE(!make_tensor_map(&bad, false, 2, g.data(), dims, bad_strides, box), "TMA refuses a 200-byte pitch");
  t.c0 = 60;
  t.c1 = 8;
  t.out = out.data();
  t.nan_before_wait = &nan_before;
  t.early_parity_ok = &early;
  attnopt_emu::launch(tma_kernel, dim3(1), 32, 4096 + 64, nullptr, t);
  EXPECT_TRUE(nan_before == 1, "TMA destination is NaN until the phase completes");
  EXPECT_TRUE(early == 1, "try_wait.parity 1 on a fresh barrier");
  int bad_elems = 0;
  for (int r = 0; r < kBoxRows; ++r)
    for (int c = 0; c < kBoxCols; ++c) {
      // Row r is 128 bytes; its 16-byte chunk c/8 sits at chunk (c/8) ^ (r % 8).
      const int phys = r * 64 + (((c / 8) ^ (r % 8)) * 8) + c % 8;
      const int gr = t.c1 + r, gc = t.c0 + c;
      const uint16_t want = gr < rows && gc < cols ? g[gr * 104 + gc] : 0;
      bad_elems += out[phys] != want;
    }
  EXPECT_TRUE(bad_elems == 0, "TMA box with 128B swizzle and zero fill: %d wrong elements", bad_elems);
}

struct BarArgs {
  int* seen;
};

void named_kernel(BarArgs b) {
  ATTNOPT_DYNAMIC_SMEM(int, smem);
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    smem[threadIdx.x] = 7 + static_cast<int>(threadIdx.x);
    named_bar_arrive(1, 64);  // producer: signals without waiting
  } else if (warp == 1) {
    named_bar_sync(1, 64);
    b.seen[threadIdx.x - 32] = smem[threadIdx.x - 32];
  }
}

void named_barrier_tests() {
  std::vector<int> seen(32, -1);
  attnopt_emu::launch(named_kernel, dim3(1), 64, 256, nullptr, BarArgs{seen.data()});
  int bad = 0;
  for (int i = 0; i < 32; ++i) bad += seen[i] != 7 + i;
  EXPECT_TRUE(bad == 0, "bar.arrive / bar.sync ordering: %d wrong", bad);
}

struct WaitArgs {
  int* nan_before;
  float* after;
};

// A 64 x 64 x 16 wgmma of ones: its result is NaN before the wait, 16 after.
void wgmma_wait_kernel(WaitArgs w) {
  ATTNOPT_DYNAMIC_SMEM(unsigned char, smem);
  uint16_t* tile = reinterpret_cast<uint16_t*>(smem);
  for (int i = threadIdx.x; i < 64 * 64; i += 128) tile[i] = 0x3c00;  // f16 1.0, any swizzle
  __syncthreads();
  float d[32];
  for (float& x : d) x = 0.0f;
  const uint64_t desc = encode_smem_desc(SmemDesc{0, 16, 1024, 0, Swizzle::k128B});
  wgmma_fence();
  wgmma_ss<__half, 64, 0>(d, desc, desc, 1);
  wgmma_commit();
  const int nan = std::isnan(d[0]) && std::isnan(d[31]);
  wgmma_wait<0>();
  if (threadIdx.x == 5) {
    *w.nan_before = nan;
    *w.after = d[7];
  }
}

void wgmma_tests() {
  int nan_before = 0;
  float after = 0.0f;
  attnopt_emu::launch(wgmma_wait_kernel, dim3(1), 128, 64 * 64 * 2, nullptr, WaitArgs{&nan_before, &after});
  EXPECT_TRUE(nan_before == 1, "wgmma accumulators are NaN until wgmma.wait_group");
  EXPECT_TRUE(after == 16.0f, "wgmma result after the wait: %g", after);
}

void gemm_tests() {
  attnopt_emu::set_device(9, 227 * 1024);
  std::mt19937 rng(11);
  struct Case {
    attnopt_dtype t;
    int m, n, k;
    bool mn;
  };
  const Case cases[] = {{ATTNOPT_BF16, 100, 72, 136, false}, {ATTNOPT_F16, 64, 64, 64, true},
                        {ATTNOPT_F16, 70, 136, 72, false}, {ATTNOPT_BF16, 128, 80, 200, true}};
  for (const Case& c : cases) {
    attnopt_test::Tensor a = attnopt_test::make_tensor(c.t, static_cast<size_t>(c.m) * c.k, rng);
    attnopt_test::Tensor b = attnopt_test::make_tensor(c.t, static_cast<size_t>(c.n) * c.k, rng);
    std::vector<float> out(static_cast<size_t>(c.m) * c.n, NAN);
    const int rc = attnopt_cuda_wgmma_gemm_check(c.t, a.data(), b.data(), out.data(), c.m, c.n, c.k, c.mn, nullptr);
    EXPECT_TRUE(rc == ATTNOPT_OK, "wgmma GEMM status %d", rc);
    double num = 0, den = 0;
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < c.n; ++j) {
        double ref = 0;
        for (int kk = 0; kk < c.k; ++kk)
          ref += a.value[static_cast<size_t>(i) * c.k + kk] *
                 b.value[c.mn ? static_cast<size_t>(kk) * c.n + j : static_cast<size_t>(j) * c.k + kk];
        const double e = out[static_cast<size_t>(i) * c.n + j] - ref;
        num += e * e;
        den += ref * ref;
      }
    const double err = std::sqrt(num / den);
    std::printf("wgmma GEMM %s %dx%dx%d B %s: rel err %.2e\n", attnopt_test::dtype_name(c.t), c.m, c.n, c.k,
                c.mn ? "MN-major" : "K-major", err);
    EXPECT_TRUE(err < 1e-6, "wgmma GEMM rel error %.3e", err);
  }
  attnopt_emu::set_device(8, 99 * 1024);
  float dummy = 0;
  EXPECT_TRUE(attnopt_cuda_wgmma_gemm_check(ATTNOPT_F16, &dummy, &dummy, &dummy, 1, 1, 1, 0, nullptr) ==
                  ATTNOPT_ERR_UNSUPPORTED,
              "wgmma GEMM refuses a device other than compute capability 9.0");
}

}  // namespace

void hopper_unit_tests() {
  descriptor_tests();
  tma_tests();
  named_barrier_tests();
  wgmma_tests();
  gemm_tests();
  std::printf("hopper unit checks: %s\n", attnopt_test::g_failures ? "FAILED" : "passed");
}
