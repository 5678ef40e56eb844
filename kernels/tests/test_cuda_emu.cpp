// Runs the CUDA kernel source (SIMT and tensor-core paths, through the real
// CUDA C ABI entry points in launch.cu) on the CPU emulation in tests/emu and
// checks the outputs against the float64 reference. This exercises the
// kernels' indexing, tiling, masking, softmax and fragment handling as written;
// it cannot catch compiler, timing or memory-model issues of real hardware.
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/last_error.h"
#include "cuda_runtime.h"
#include "hostile_abi.h"
#include "reference.h"
#include "test_util.h"

namespace attnopt_test {
int g_failures = 0;
}

using namespace attnopt_test;

namespace {

struct Path {
  const char* name;
  int cc_major;
  bool force_simt;
  int stages;        // ATTNOPT_MMA_STAGES (0: the default)
  int smem_kib;      // opt-in shared memory per block
  bool mma_only;     // runs only the f16/bf16 FlashAttention cases (a tensor-core ring variant)
  // ATTNOPT_CUDA_HOPPER: "1" the wgmma kernel wherever it applies, "0" never
  // (these profiles test flash_mma.cu), nullptr unset: the default policy.
  const char* hopper = "0";
};

const Path kHopper = {"wgmma (sm_90a)", 9, false, 0, 227, true, "1"};
const Path kHopperDefault = {"sm_90, default policy", 9, false, 0, 227, true, nullptr};

// Opt-in shared memory: sm_86 has the smallest of the sm_80+ parts (99 KiB),
// sm_70 96 KiB, sm_90 227 KiB.
const Path kPaths[] = {{"mma (sm_80)", 8, false, 0, 99, false},
                       {"mma 1 stage", 8, false, 1, 99, true},
                       {"mma 2 stages (sm_90)", 9, false, 2, 227, true},
                       {"SIMT (sm_80, forced)", 8, true, 0, 99, false},
                       {"SIMT (sm_70)", 7, false, 0, 96, false}};

void use_path(const Path& p) {
  attnopt_emu::set_device(p.cc_major, p.smem_kib * 1024);
  if (p.force_simt) setenv("ATTNOPT_CUDA_PATH", "simt", 1); else unsetenv("ATTNOPT_CUDA_PATH");
  if (p.hopper) setenv("ATTNOPT_CUDA_HOPPER", p.hopper, 1); else unsetenv("ATTNOPT_CUDA_HOPPER");
  if (p.stages) setenv("ATTNOPT_MMA_STAGES", std::to_string(p.stages).c_str(), 1); else unsetenv("ATTNOPT_MMA_STAGES");
}

// CUDA-side tolerances of the GPU check (P is rounded to f16/bf16 for P.V).
double cuda_tolerance(attnopt_dtype t) { return t == ATTNOPT_F32 ? 1e-5 : t == ATTNOPT_F16 ? 2e-3 : 1e-2; }

Get4 contiguous(const Tensor& t, int64_t h, int64_t n, int64_t d) {
  const double* v = t.value.data();
  return [=](int64_t b, int64_t hh, int64_t i, int64_t c) { return v[((b * h + hh) * n + i) * d + c]; };
}

struct Flash {
  std::string name;
  attnopt_dtype dtype;
  int64_t B, Hq, Hkv, Nq, Nk, Dqk, Dv;
  // 0 none, 1 bool (1,1,Nq,Nk) with dead rows, 2 additive (B,1,1,Nk) in the
  // I/O dtype, 3 bool (1,1,Nq,Nk) in blocks of 32 rows x 64 keys kept or
  // dropped whole (tile summaries) with one dead row
  int mask;
  bool causal;
  bool heads_inner = false;  // Q/K/V/O stored (B,N,H,D) and based one element off 16-byte alignment
  int64_t window = 0;        // with causal: a sliding window
  bool tensor_cores = false;  // aimed at the tensor-core kernel's tiling: not rerun on the SIMT profiles
  float softcap = 0;          // > 0: scores capped before the mask
};

// Strides of a (B,H,N,D) view of (B,N,H,D) memory.
void inner_strides(int64_t h, int64_t n, int64_t d, int64_t s[4]) {
  s[0] = n * h * d;
  s[1] = d;
  s[2] = h * d;
  s[3] = 1;
}

// Copies a contiguous (B,H,N,D) tensor into (B,N,H,D) order after one spare element.
Tensor to_inner(const Tensor& t, int64_t b, int64_t h, int64_t n, int64_t d) {
  Tensor r = t;
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < d; ++c) {
          const size_t src = ((bb * h + hh) * n + i) * d + c, dst = 1 + ((bb * n + i) * h + hh) * d + c;
          if (t.dtype == ATTNOPT_F32) {
            r.f32.resize(t.size() + 1);
            r.f32[dst] = t.f32[src];
          } else {
            r.h16.resize(t.size() + 1);
            r.h16[dst] = t.h16[src];
          }
        }
  return r;
}

void* plus_one(Tensor& t) {
  return t.dtype == ATTNOPT_F32 ? static_cast<void*>(t.f32.data() + 1) : static_cast<void*>(t.h16.data() + 1);
}

void run_flash(const Flash& c, const Path& path) {
  std::mt19937 rng(17 + static_cast<unsigned>(c.Dqk * 3 + c.Nk));
  Tensor q = make_tensor(c.dtype, c.B * c.Hq * c.Nq * c.Dqk, rng, -2.f, 2.f);
  Tensor k = make_tensor(c.dtype, c.B * c.Hkv * c.Nk * c.Dqk, rng, -2.f, 2.f);
  Tensor v = make_tensor(c.dtype, c.B * c.Hkv * c.Nk * c.Dv, rng);
  Tensor o = make_poisoned(c.dtype, c.B * c.Hq * c.Nq * c.Dv);
  attnopt_flash_params p{};
  p.dtype = c.dtype;
  p.batch = c.B; p.heads_q = c.Hq; p.heads_kv = c.Hkv; p.len_q = c.Nq; p.len_k = c.Nk;
  p.dim_qk = c.Dqk; p.dim_v = c.Dv;
  p.q.data = q.data(); contiguous_strides(c.Hq, c.Nq, c.Dqk, p.q.stride);
  p.k.data = k.data(); contiguous_strides(c.Hkv, c.Nk, c.Dqk, p.k.stride);
  p.v.data = v.data(); contiguous_strides(c.Hkv, c.Nk, c.Dv, p.v.stride);
  p.o = o.data(); contiguous_strides(c.Hq, c.Nq, c.Dv, p.o_stride);
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.Dqk)));
  p.causal = c.causal;
  p.window = c.window;
  p.softcap = c.softcap;
  std::vector<uint8_t> bools;
  Tensor madd;
  Mask4 maskfn;
  if (c.mask == 1 || c.mask == 3) {
    bools.resize(c.Nq * c.Nk);
    for (int64_t i = 0; i < c.Nq; ++i)
      for (int64_t j = 0; j < c.Nk; ++j)
        bools[i * c.Nk + j] = c.mask == 1 ? i % 6 != 1 && (i + 2 * j) % 7 != 0 : (i / 32 + j / 64) % 3 != 0 && i != 37;
    p.mask_type = ATTNOPT_MASK_BOOL;
    p.mask = bools.data();
    p.mask_stride[2] = c.Nk;
    p.mask_stride[3] = 1;
    const uint8_t* m = bools.data();
    const int64_t nk = c.Nk;
    maskfn = [m, nk](int64_t, int64_t, int64_t i, int64_t j) { return m[i * nk + j] ? 0.0 : -INFINITY; };
  } else if (c.mask == 2) {
    madd = make_tensor(c.dtype, c.B * c.Nk, rng, -3.f, 0.f);
    p.mask_type = c.dtype == ATTNOPT_F32 ? ATTNOPT_MASK_F32 : c.dtype == ATTNOPT_F16 ? ATTNOPT_MASK_F16 : ATTNOPT_MASK_BF16;
    p.mask = madd.data();
    p.mask_stride[0] = c.Nk;
    p.mask_stride[3] = 1;
    const double* m = madd.value.data();
    const int64_t nk = c.Nk;
    maskfn = [m, nk](int64_t b, int64_t, int64_t, int64_t j) { return m[b * nk + j]; };
  }
  Tensor qi, ki, vi, oi;
  if (c.heads_inner) {  // same values, strided and misaligned: the scalar-load path
    qi = to_inner(q, c.B, c.Hq, c.Nq, c.Dqk);
    ki = to_inner(k, c.B, c.Hkv, c.Nk, c.Dqk);
    vi = to_inner(v, c.B, c.Hkv, c.Nk, c.Dv);
    oi = make_poisoned(c.dtype, o.size() + 1);
    p.q.data = plus_one(qi); inner_strides(c.Hq, c.Nq, c.Dqk, p.q.stride);
    p.k.data = plus_one(ki); inner_strides(c.Hkv, c.Nk, c.Dqk, p.k.stride);
    p.v.data = plus_one(vi); inner_strides(c.Hkv, c.Nk, c.Dv, p.v.stride);
    p.o = plus_one(oi); inner_strides(c.Hq, c.Nq, c.Dv, p.o_stride);
  }
  const int rc = attnopt_cuda_flash_attention_fwd(&p, nullptr);
  EXPECT_TRUE(rc == ATTNOPT_OK, "%s: status %d", c.name.c_str(), rc);
  const bool ran_wgmma = attnopt_emu::last_launch_threads() == 384;  // its 3 warpgroups
  if (path.hopper && std::strcmp(path.hopper, "1") == 0)  // not a fallback
    EXPECT_TRUE(ran_wgmma, "%s: the Hopper kernel did not run", c.name.c_str());
  if (!path.hopper)  // the default, on cases inside its cover: d 128 only (hopper_wanted)
    EXPECT_TRUE(ran_wgmma == (c.Dqk == 128), "%s: the default policy %s the Hopper kernel", c.name.c_str(),
                ran_wgmma ? "took" : "did not take");
  if (c.heads_inner) {  // back to contiguous order for the comparison
    for (int64_t bb = 0; bb < c.B; ++bb)
      for (int64_t hh = 0; hh < c.Hq; ++hh)
        for (int64_t i = 0; i < c.Nq; ++i)
          for (int64_t e = 0; e < c.Dv; ++e) {
            const size_t dst = ((bb * c.Hq + hh) * c.Nq + i) * c.Dv + e;
            const size_t src = 1 + ((bb * c.Nq + i) * c.Hq + hh) * c.Dv + e;
            if (c.dtype == ATTNOPT_F32) o.f32[dst] = oi.f32[src]; else o.h16[dst] = oi.h16[src];
          }
  }
  Admit admit;
  if (c.causal) {
    const int64_t off = c.Nk - c.Nq, w = c.window;
    admit = [off, w](int64_t i, int64_t j) { return j <= i + off && (w <= 0 || j > i + off - w); };
  }
  const std::vector<double> ref =
      reference_attention({c.B, c.Hq, c.Hkv, c.Nq, c.Nk, c.Dqk, c.Dv}, contiguous(q, c.Hq, c.Nq, c.Dqk),
                          contiguous(k, c.Hkv, c.Nk, c.Dqk), contiguous(v, c.Hkv, c.Nk, c.Dv), p.scale, maskfn, admit,
                          p.softcap);
  size_t bad_zero = 0;
  for (size_t r = 0; r < ref.size() / c.Dv; ++r) {
    bool zero = true;
    for (int64_t e = 0; e < c.Dv; ++e) zero &= ref[r * c.Dv + e] == 0.0;
    if (zero)
      for (int64_t e = 0; e < c.Dv; ++e) bad_zero += o.get(r * c.Dv + e) != 0.0;
  }
  const double err = rel_l2(o, ref);
  std::printf("%-22s %-44s %-4s err %.2e bits %016llx\n", path.name, c.name.c_str(), dtype_name(c.dtype), err,
              static_cast<unsigned long long>(o.bits_hash()));
  EXPECT_TRUE(err <= cuda_tolerance(c.dtype), "%s [%s] %s: rel L2 error %.3e", c.name.c_str(), path.name,
              dtype_name(c.dtype), err);
  EXPECT_TRUE(bad_zero == 0, "%s [%s]: key-less rows not zero", c.name.c_str(), path.name);
}

void run_window(attnopt_dtype t, const std::vector<int64_t>& grid, const std::vector<int64_t>& win,
                const std::vector<int64_t>& shift, int64_t D, int64_t Dv, const Path& path) {
  std::mt19937 rng(5 + static_cast<unsigned>(grid.size()));
  int64_t N = 1;
  for (int64_t g : grid) N *= g;
  const int64_t B = 1, H = 2;
  Tensor q = make_tensor(t, B * H * N * D, rng, -2.f, 2.f);
  Tensor k = make_tensor(t, B * H * N * D, rng, -2.f, 2.f);
  Tensor v = make_tensor(t, B * H * N * Dv, rng);
  Tensor o = make_poisoned(t, B * H * N * Dv);
  attnopt_window_params p{};
  p.dtype = t;
  p.batch = B; p.heads_q = p.heads_kv = H; p.len = N; p.dim_qk = D; p.dim_v = Dv;
  p.q.data = q.data(); contiguous_strides(H, N, D, p.q.stride);
  p.k.data = k.data(); contiguous_strides(H, N, D, p.k.stride);
  p.v.data = v.data(); contiguous_strides(H, N, Dv, p.v.stride);
  p.o = o.data(); contiguous_strides(H, N, Dv, p.o_stride);
  p.ndim = static_cast<int>(grid.size());
  for (int a = 0; a < p.ndim; ++a) {
    p.grid[a] = grid[a];
    p.window[a] = win[a];
    p.shift[a] = shift[a];
  }
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  const int rc = attnopt_cuda_window_attention_fwd(&p, nullptr);
  EXPECT_TRUE(rc == ATTNOPT_OK, "window status %d", rc);
  const std::vector<double> ref =
      reference_attention({B, H, H, N, N, D, Dv}, contiguous(q, H, N, D), contiguous(k, H, N, D),
                          contiguous(v, H, N, Dv), p.scale, nullptr, window_admit(grid, win, shift));
  const double err = rel_l2(o, ref);
  std::string name = "window grid";
  for (int64_t g : grid) name += " " + std::to_string(g);
  std::printf("%-22s %-44s %-4s err %.2e bits %016llx\n", path.name, name.c_str(), dtype_name(t), err,
              static_cast<unsigned long long>(o.bits_hash()));
  EXPECT_TRUE(err <= cuda_tolerance(t), "%s [%s] %s: rel L2 error %.3e", name.c_str(), path.name, dtype_name(t), err);
}

}  // namespace

// Every head dim x Dv variant x mask kind x dtype at two lengths (a few
// minutes on 2 cores): test_cuda_emu sweep.
void sweep(const Path& path) {
  const int64_t dv_alt[] = {12, 64, 40, 72, 20, 200, 96};
  const int64_t dims[] = {4, 8, 16, 32, 64, 128, 256};
  const attnopt_dtype dtypes[] = {ATTNOPT_F32, ATTNOPT_F16, ATTNOPT_BF16};
  for (int di = 0; di < 7; ++di)
    for (int64_t n : {17, 65})
      for (int mk = 0; mk < 4; ++mk)
        for (attnopt_dtype t : dtypes) {
          const int64_t d = dims[di];
          const bool neq = (di + mk) % 2, gqa = (di + mk + (n > 17)) % 2;
          Flash c{"sweep d " + std::to_string(d) + "/" + std::to_string(neq ? dv_alt[di] : d) + " N " +
                      std::to_string(n) + " mask " + std::to_string(mk),
                  t, 1, 4, gqa ? 2 : 4, n, n + 3, d, neq ? dv_alt[di] : d, mk == 3 ? 0 : mk, mk == 3};
          run_flash(c, path);
        }
}

void hopper_unit_tests();  // test_hopper_emu.cpp

// The Hopper path (test_cuda_emu hopper, ctest cuda_emulated_hopper): unit
// checks of the emulated pieces, then the wgmma attention kernel. Each case
// runs 384 emulated threads per block: keep them few and small.
int hopper() {
  hopper_unit_tests();
  const Flash cases[] = {
      {"wgmma d 64, N 200 (partial tiles)", ATTNOPT_F16, 1, 2, 2, 200, 200, 64, 64, 0, false},
      {"wgmma d 128, GQA 4/2, Nq 130 < Nk 190", ATTNOPT_BF16, 1, 4, 2, 130, 190, 128, 128, 0, false},
      {"wgmma causal d 64, N 300 (skipped tiles)", ATTNOPT_BF16, 1, 1, 1, 300, 300, 64, 64, 0, true},
      {"wgmma causal Nq 150 > Nk 100 (empty rows)", ATTNOPT_F16, 1, 1, 1, 150, 100, 128, 128, 0, true},
      {"wgmma sliding window 70, N 330, B 2", ATTNOPT_F16, 2, 1, 1, 330, 330, 64, 64, 0, true, false, 70},
  };
  use_path(kHopper);
  for (const Flash& c : cases) run_flash(c, kHopper);
  // ATTNOPT_CUDA_HOPPER unset: d 128 takes the Hopper kernel, d 64 (causal or not) flash_mma.cu.
  use_path(kHopperDefault);
  for (int i : {0, 1, 2}) run_flash(cases[i], kHopperDefault);
  // Outside its cover the Hopper switch falls back to the tensor-core kernel.
  Flash masked{"wgmma switch, bool mask (mma kernel)", ATTNOPT_F16, 1, 1, 1, 70, 70, 64, 64, 1, false};
  run_flash(masked, kPaths[0]);
  Flash capped{"wgmma switch, softcap (mma kernel)", ATTNOPT_F16, 1, 1, 1, 130, 130, 64, 64, 0, true, false, 0, false, 0.5f};
  run_flash(capped, kPaths[0]);
  use_path(kPaths[0]);
  if (g_failures) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all emulated Hopper checks passed\n");
  return 0;
}

// The shared C ABI table of hostile parameters (tests/hostile_abi.h) through
// the CUDA entry points' host-side checks and, where valid, the kernels.
void hostile(const Path& path) {
  use_path(path);
  run_hostile_abi(
      "cuda (emu)", [](const attnopt_flash_params* p) { return attnopt_cuda_flash_attention_fwd(p, nullptr); },
      [](const attnopt_window_params* p) { return attnopt_cuda_window_attention_fwd(p, nullptr); },
      cuda_tolerance(ATTNOPT_F32));
}

// A launch that fails on the device: the entry point returns
// ATTNOPT_ERR_CUDA and keeps CUDA's message for the ORT status
// (cuda/last_error.h), which the launcher's cudaGetLastError cleared; the
// next call that succeeds forgets it (issues 34 and 35).
void launch_error_text() {
  use_path(kPaths[3]);  // SIMT: one launch
  hostile_abi::FlashData d(1, 1, 1, 9, 9, 8, 8);
  attnopt_emu::fail_next_launch(cudaErrorLaunchOutOfResources);
  int rc = attnopt_cuda_flash_attention_fwd(&d.p, nullptr);
  EXPECT_TRUE(rc == ATTNOPT_ERR_CUDA, "failed launch: status %d, want ATTNOPT_ERR_CUDA", rc);
  EXPECT_TRUE(std::strcmp(attnopt::cuda::last_error_text(), "too many resources requested for launch") == 0,
              "failed launch: error text \"%s\"", attnopt::cuda::last_error_text());
  rc = attnopt_cuda_flash_attention_fwd(&d.p, nullptr);
  EXPECT_TRUE(rc == ATTNOPT_OK && *attnopt::cuda::last_error_text() == 0, "next launch: status %d, error text \"%s\"",
              rc, attnopt::cuda::last_error_text());
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines survive an emulation abort
  if (argc > 1 && std::strcmp(argv[1], "hopper") == 0) return hopper();
  if (argc > 1 && std::strcmp(argv[1], "hostile") == 0) {  // the table alone (the sanitizer build runs it)
    hostile(kPaths[0]);
    std::printf("%s\n", g_failures ? "hostile table FAILED" : "hostile table passed");
    return g_failures ? 1 : 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "sweep") == 0) {
    for (const Path& path : kPaths) {
      use_path(path);
      sweep(path);
    }
    std::printf("%s\n", g_failures ? "sweep FAILED" : "sweep passed");
    return g_failures ? 1 : 0;
  }
  // test_cuda_emu only TEXT: the FlashAttention cases whose name holds TEXT.
  const std::string only = argc > 2 && std::strcmp(argv[1], "only") == 0 ? argv[2] : "";
  std::vector<Flash> cases = {
      {"d 64, N 70 (partial tiles)", ATTNOPT_F16, 1, 2, 2, 70, 70, 64, 64, 0, false},
      {"GQA 4/2, Dqk 24, Dv 40, bool mask, Nk 130", ATTNOPT_BF16, 1, 4, 2, 65, 130, 24, 40, 1, false},
      {"d 4, additive (B,1,1,Nk)", ATTNOPT_F16, 2, 2, 2, 33, 47, 4, 4, 2, false},
      {"causal Nq 100 > Nk 70 (empty rows)", ATTNOPT_BF16, 1, 1, 1, 100, 70, 32, 32, 0, true},
      {"causal Nq 40 < Nk 90", ATTNOPT_F16, 1, 2, 1, 40, 90, 16, 16, 0, true},
      // Long enough for interior tiles (no per-element checks) beside diagonal ones.
      {"causal N 300, d 64 (32 rows per warp)", ATTNOPT_F16, 1, 1, 1, 300, 300, 64, 64, 0, true},
      {"causal N 200, d 128 (16 rows per warp)", ATTNOPT_BF16, 1, 1, 1, 200, 200, 128, 128, 0, true},
      {"N 260, Nk 333, d 48, no mask", ATTNOPT_F16, 1, 2, 2, 260, 333, 48, 48, 0, false},
      {"d 256", ATTNOPT_F16, 1, 1, 1, 20, 70, 256, 256, 0, false},
      {"Dqk 130, Dv 72 (scalar loads)", ATTNOPT_BF16, 1, 1, 1, 30, 66, 130, 72, 1, false},
      {"SAGAN Dqk 8, Dv 64", ATTNOPT_F16, 1, 1, 1, 80, 80, 8, 64, 0, false},
      {"f32 GQA, bool mask + causal", ATTNOPT_F32, 1, 4, 2, 50, 50, 20, 12, 1, true},
      {"f32 d 256 additive", ATTNOPT_F32, 1, 1, 1, 20, 40, 256, 200, 2, false},
      {"one query, one key", ATTNOPT_F16, 1, 1, 1, 1, 1, 16, 16, 0, false},
      {"(B,N,H,D) memory, misaligned, causal", ATTNOPT_F16, 2, 4, 2, 45, 45, 32, 32, 0, true, true},
      {"(B,N,H,D) memory, misaligned, bool mask", ATTNOPT_BF16, 1, 2, 2, 70, 70, 64, 48, 1, false, true},
      {"causal sliding window 20, N 150", ATTNOPT_F16, 1, 2, 1, 150, 150, 32, 32, 0, true, false, 20},
      {"causal sliding window 7, Nq 40 < Nk 90, additive", ATTNOPT_BF16, 2, 2, 2, 40, 90, 16, 16, 2, true, false, 7},
      {"f32 causal sliding window 64, N 200", ATTNOPT_F32, 1, 1, 1, 200, 200, 64, 64, 0, true, false, 64},
      // The SIMT kernel starts at the block's first window key (not key 0):
      // Nq < Nk shifts every window, the bool mask has dead rows.
      {"f32 causal sliding window 9, Nq 150 < Nk 420, bool", ATTNOPT_F32, 1, 2, 1, 150, 420, 24, 24, 1, true, false, 9},
      // Tensor cores: blocks whose window starts tiles in (skipped tiles
      // before it, warps that see none of a tile, interior tiles inside it).
      {"causal sliding window 100, N 520, d 64", ATTNOPT_BF16, 1, 1, 1, 520, 520, 64, 64, 0, true, false, 100, true},
      {"causal sliding window 64, Nq 200 < Nk 600, bool", ATTNOPT_F16, 1, 2, 1, 200, 600, 16, 16, 1, true, false, 64, true},
      {"causal sliding window 300, N 400, d 128", ATTNOPT_F16, 1, 1, 1, 400, 400, 128, 128, 0, true, false, 300, true},
      // Bool masks as bits: 8-byte rows (Nk % 8 == 0), whole-tile keep/drop.
      {"seed-like d 4, bool mask, Nk 264 (8-byte rows)", ATTNOPT_F16, 1, 2, 2, 150, 264, 4, 4, 1, false, false, 0, true},
      {"d 32, bool block mask, Nk 320", ATTNOPT_BF16, 1, 2, 2, 200, 320, 32, 32, 3, false, false, 0, true},
      {"d 4, bool block mask + causal, N 300", ATTNOPT_F16, 1, 1, 1, 300, 300, 4, 4, 3, true, false, 0, true},
      {"d 64, bool block mask, Nk 330 (byte rows)", ATTNOPT_F16, 1, 1, 1, 140, 330, 64, 64, 3, false, false, 0, true},
      // Softcap before the mask: interior and diagonal tiles, each mask kind.
      {"softcap 0.7, causal N 300, d 64", ATTNOPT_F16, 1, 1, 1, 300, 300, 64, 64, 0, true, false, 0, false, 0.7f},
      {"softcap 2, GQA 4/2, bool mask, Nk 130", ATTNOPT_BF16, 1, 4, 2, 65, 130, 24, 40, 1, false, false, 0, false, 2},
      {"f32 softcap 1, additive (B,1,1,Nk)", ATTNOPT_F32, 2, 2, 2, 33, 47, 16, 16, 2, false, false, 0, false, 1},
  };
  // Every finite cap against the float64 reference (issue 34: c * tanhf(s / c)
  // lost s's digits to a subnormal s / c near FLT_MAX, and gave 0 under -ftz):
  // f32 on the SIMT kernel, f16 causal on the tensor-core one (interior and
  // diagonal tiles), bf16 with a bool mask's dead rows.
  for (float cap : {1e-3f, 30.0f, 50.0f, 100.0f, 1e5f, 1e10f, 1e30f, FLT_MAX}) {
    const std::string v = std::to_string(cap).substr(0, 12);
    cases.push_back({"f32 softcap " + v + ", Nq 33, Nk 70", ATTNOPT_F32, 1, 2, 2, 33, 70, 16, 16, 0, false, false, 0,
                     false, cap});
    cases.push_back({"softcap " + v + ", causal N 200, d 32", ATTNOPT_F16, 1, 1, 1, 200, 200, 32, 32, 0, true, false, 0,
                     false, cap});
    cases.push_back({"softcap " + v + ", bool mask, dead rows", ATTNOPT_BF16, 1, 2, 2, 40, 70, 16, 16, 1, false, false,
                     0, false, cap});
  }
  for (const Path& path : kPaths) {
    use_path(path);
    for (const Flash& c : cases) {
      if (path.cc_major < 8 && c.Dqk == 256 && c.dtype != ATTNOPT_F32) continue;  // same SIMT code as sm_80 forced
      if (path.mma_only && (c.dtype == ATTNOPT_F32 || c.Nk < 130)) continue;  // ring variants: several tiles
      if ((path.force_simt || path.cc_major < 8) && c.tensor_cores) continue;  // the SIMT kernel did not change
      if (!only.empty() && c.name.find(only) == std::string::npos) continue;
      run_flash(c, path);
    }
    if (path.mma_only || !only.empty()) continue;
    run_window(ATTNOPT_F16, {10, 12}, {4, 5}, {2, 3}, 32, 32, path);
    run_window(ATTNOPT_BF16, {5, 6, 7}, {2, 4, 3}, {1, 2, 3}, 16, 24, path);
    run_window(ATTNOPT_F32, {30}, {8}, {5}, 8, 8, path);
    run_window(ATTNOPT_F16, {3, 4, 5}, {1, 1, 1}, {0, 0, 0}, 8, 8, path);    // every token alone
    run_window(ATTNOPT_F16, {9, 10}, {9, 10}, {4, 7}, 16, 16, path);         // one window = exact
  }
  hostile(kPaths[0]);
  launch_error_text();
  if (g_failures) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all emulated CUDA checks passed\n");
  return 0;
}
