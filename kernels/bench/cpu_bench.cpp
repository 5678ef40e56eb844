// CPU kernel benchmark: GFLOP/s of attnopt_cpu_flash_attention_fwd per shape
// and its share of this core's measured FMA peak (for the instruction set the
// kernels use). FLOPs count 2 * Nq * Nk * (Dqk + Dv) per head (half that when
// causal with Nq == Nk); exp and softmax are not counted.
// Usage: cpu_bench [--rounds R] [--quick] [--only SUBSTRING] [--isa generic|avx2|avx512]
// Threads: ATTNOPT_NUM_THREADS (set it to 1 for per-core figures).
#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/numeric.h"
#include "cpu/cpu_isa.h"
#include "cpu/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

// Process CPU time, not wall time: other jobs share this machine's cores, and
// CPU time only counts while this process runs (with one kernel thread it is
// that thread's time; with more, the sum, i.e. per-core throughput).
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  }
};

double seconds(double t0) { return Clock::now() - t0; }

// FMA peak of one core: independent FMA chains, enough to hide the latency.
template <typename F>
double peak_gflops(F run_fma, double flops_per_iter) {
  const long iters = 20'000'000;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    volatile float sink = run_fma(iters);
    (void)sink;
    best = std::max(best, flops_per_iter * iters / seconds(t0) * 1e-9);
  }
  return best;
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fma_avx512(long iters) {
  __m512 a[12];
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(static_cast<float>(i));
  for (long n = 0; n < iters; ++n)
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], x, y);
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}
__attribute__((target("avx2,fma"))) float fma_avx2(long iters) {
  __m256 a[12];
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(static_cast<float>(i));
  for (long n = 0; n < iters; ++n)
    for (int i = 0; i < 12; ++i) a[i] = _mm256_fmadd_ps(a[i], x, y);
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, a[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}
#endif

// Baseline: 4-lane multiply + add (no FMA in the x86-64 baseline).
float mul_add_generic(long iters) {
  typedef float v4 __attribute__((vector_size(16)));
  v4 a[12];
  for (int i = 0; i < 12; ++i) a[i] = v4{} + static_cast<float>(i);
  const v4 x = v4{} + 0.999999f, y = v4{} + 1e-7f;
  for (long n = 0; n < iters; ++n)
    for (int i = 0; i < 12; ++i) a[i] = a[i] * x + y;
  float s = 0;
  for (int i = 0; i < 12; ++i) s += a[i][0];
  return s;
}

double measured_peak(attnopt::CpuIsa isa) {
#if defined(__x86_64__)
  if (isa == attnopt::CpuIsa::kAvx512) return peak_gflops(fma_avx512, 12 * 16 * 2);
  if (isa == attnopt::CpuIsa::kAvx2) return peak_gflops(fma_avx2, 12 * 8 * 2);
#endif
  (void)isa;
  return peak_gflops(mul_add_generic, 12 * 4 * 2);
}

struct Shape {
  const char* name;
  int64_t heads, n, dqk, dv;
  bool mask, causal;
  attnopt_dtype dtype;
};

struct Problem {
  attnopt_flash_params p{};
  std::vector<float> q, k, v, o;
  std::vector<uint16_t> q16, k16, v16, o16;
  std::vector<uint8_t> mask;
};

void contiguous(int64_t h, int64_t n, int64_t d, int64_t s[4]) {
  s[3] = 1; s[2] = d; s[1] = n * d; s[0] = h * n * d;
}

void fill(std::vector<float>& x, std::vector<uint16_t>& x16, int64_t n, attnopt_dtype t, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  if (t == ATTNOPT_F32) {
    x.resize(n);
    for (auto& e : x) e = u(rng);
  } else {
    x16.resize(n);
    for (auto& e : x16) e = t == ATTNOPT_F16 ? attnopt::float_to_half(u(rng)) : attnopt::float_to_bf16(u(rng));
  }
}

void make(const Shape& s, Problem& pr) {
  std::mt19937 rng(7);
  const int64_t h = s.heads, n = s.n;
  fill(pr.q, pr.q16, h * n * s.dqk, s.dtype, rng);
  fill(pr.k, pr.k16, h * n * s.dqk, s.dtype, rng);
  fill(pr.v, pr.v16, h * n * s.dv, s.dtype, rng);
  if (s.dtype == ATTNOPT_F32) pr.o.resize(h * n * s.dv); else pr.o16.resize(h * n * s.dv);
  attnopt_flash_params& p = pr.p;
  p.dtype = s.dtype;
  p.batch = 1; p.heads_q = p.heads_kv = h; p.len_q = p.len_k = n; p.dim_qk = s.dqk; p.dim_v = s.dv;
  const bool f = s.dtype == ATTNOPT_F32;
  p.q.data = f ? static_cast<const void*>(pr.q.data()) : pr.q16.data();
  p.k.data = f ? static_cast<const void*>(pr.k.data()) : pr.k16.data();
  p.v.data = f ? static_cast<const void*>(pr.v.data()) : pr.v16.data();
  p.o = f ? static_cast<void*>(pr.o.data()) : pr.o16.data();
  contiguous(h, n, s.dqk, p.q.stride);
  contiguous(h, n, s.dqk, p.k.stride);
  contiguous(h, n, s.dv, p.v.stride);
  contiguous(h, n, s.dv, p.o_stride);
  p.scale = 1.0f / std::sqrt(static_cast<float>(s.dqk));
  p.causal = s.causal;
  if (s.mask) {  // (1, 1, N, N) bool, 70 % attend, as the seed model
    std::bernoulli_distribution keep(0.7);
    pr.mask.resize(n * n);
    for (auto& m : pr.mask) m = keep(rng);
    p.mask_type = ATTNOPT_MASK_BOOL;
    p.mask = pr.mask.data();
    p.mask_stride[2] = n;
    p.mask_stride[3] = 1;
  }
}

double flops(const Shape& s) {
  const double f = 2.0 * s.heads * s.n * s.n * (s.dqk + s.dv);
  return s.causal ? f * (s.n + 1) / (2.0 * s.n) : f;
}

struct WindowShape {
  const char* name;
  int64_t heads, d;
  int ndim;
  int64_t grid[3], window[3];
};

// WindowAttention on the same tiles; FLOPs count each token's own window.
void bench_window(const WindowShape& w, int rounds, double peak) {
  int64_t n = 1, wsize = 1;
  for (int a = 0; a < w.ndim; ++a) {
    n *= w.grid[a];
    wsize *= w.window[a];  // the grids below are divided evenly
  }
  std::mt19937 rng(3);
  std::vector<float> q, k, v, o(w.heads * n * w.d);
  std::vector<uint16_t> unused;
  fill(q, unused, w.heads * n * w.d, ATTNOPT_F32, rng);
  fill(k, unused, w.heads * n * w.d, ATTNOPT_F32, rng);
  fill(v, unused, w.heads * n * w.d, ATTNOPT_F32, rng);
  attnopt_window_params p{};
  p.dtype = ATTNOPT_F32;
  p.batch = 1; p.heads_q = p.heads_kv = w.heads; p.len = n; p.dim_qk = p.dim_v = w.d;
  p.q.data = q.data(); contiguous(w.heads, n, w.d, p.q.stride);
  p.k.data = k.data(); contiguous(w.heads, n, w.d, p.k.stride);
  p.v.data = v.data(); contiguous(w.heads, n, w.d, p.v.stride);
  p.o = o.data(); contiguous(w.heads, n, w.d, p.o_stride);
  p.ndim = w.ndim;
  for (int a = 0; a < w.ndim; ++a) {
    p.grid[a] = w.grid[a];
    p.window[a] = w.window[a];
    p.shift[a] = w.window[a] / 2;
  }
  p.scale = 1.0f / std::sqrt(static_cast<float>(w.d));
  attnopt_cpu_window_attention_fwd(&p);
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = Clock::now();
    if (attnopt_cpu_window_attention_fwd(&p) != ATTNOPT_OK) std::exit(1);
    t.push_back(seconds(t0));
  }
  std::sort(t.begin(), t.end());
  const double gf = 2.0 * w.heads * n * wsize * (2 * w.d) / t.front() * 1e-9;
  std::printf("| %s | %.2f | %.2f | %.1f | %.0f %% |\n", w.name, t.front() * 1e3, t[t.size() / 2] * 1e3, gf,
              100.0 * gf / peak);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--isa" && i + 1 < argc) {
      const std::string v = argv[++i];
      const attnopt::CpuIsa isa = v == "avx512" ? attnopt::CpuIsa::kAvx512
                                  : v == "avx2" ? attnopt::CpuIsa::kAvx2
                                                : attnopt::CpuIsa::kGeneric;
      if (!attnopt::cpu_isa_force(isa)) {
        std::fprintf(stderr, "cpu_bench: %s is not supported here\n", v.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: cpu_bench [--rounds R] [--quick] [--only SUBSTRING] [--isa generic|avx2|avx512]\n");
      return 2;
    }
  }
  const attnopt::CpuIsa isa = attnopt::cpu_tile_kernels().isa;
  const double peak = measured_peak(isa);
  std::printf("kernels: %s, threads %d, measured peak of one core (%s): %.1f GFLOP/s\n",
              attnopt::cpu_isa_name(isa), attnopt::cpu_num_threads(),
              isa == attnopt::CpuIsa::kGeneric ? "4-lane multiply + add" : "FMA", peak);
  const std::vector<Shape> shapes = {
      {"MHA 8 heads d 64, N 2048", 8, 2048, 64, 64, false, false, ATTNOPT_F32},
      {"SAGAN 1 head Dqk 8 / Dv 64, N 8192", 1, 8192, 8, 64, false, false, ATTNOPT_F32},
      {"16 heads d 4, bool mask, N 2048", 16, 2048, 4, 4, true, false, ATTNOPT_F32},
      {"16 heads d 4, bool mask, N 2048, f16", 16, 2048, 4, 4, true, false, ATTNOPT_F16},
      {"4 heads d 32, N 2048", 4, 2048, 32, 32, false, false, ATTNOPT_F32},
      {"causal 4 heads d 32, N 2048", 4, 2048, 32, 32, false, true, ATTNOPT_F32},
      {"8 heads d 128, N 2048", 8, 2048, 128, 128, false, false, ATTNOPT_F32},
      {"seed: 16 heads d 4, bool mask, N 10000, f16", 16, 10000, 4, 4, true, false, ATTNOPT_F16},
      {"seed: SAGAN 256x256, Dqk 8 / Dv 64, N 65536", 1, 65536, 8, 64, false, false, ATTNOPT_F32},
  };
  std::printf("| shape | min CPU ms | median CPU ms | GFLOP/s per core (min) | %% of peak |\n|---|---:|---:|---:|---:|\n");
  for (const Shape& s : shapes) {
    if ((quick && s.n > 4096) || std::string(s.name).find(only) == std::string::npos) continue;
    Problem pr;
    make(s, pr);
    std::vector<double> t;
    attnopt_cpu_flash_attention_fwd(&pr.p);  // warm-up (pages, pool)
    for (int r = 0; r < rounds; ++r) {
      const auto t0 = Clock::now();
      if (attnopt_cpu_flash_attention_fwd(&pr.p) != ATTNOPT_OK) return 1;
      t.push_back(seconds(t0));
    }
    std::sort(t.begin(), t.end());
    const double gf = flops(s) / t.front() * 1e-9;
    std::printf("| %s | %.2f | %.2f | %.1f | %.0f %% |\n", s.name, t.front() * 1e3, t[t.size() / 2] * 1e3, gf,
                100.0 * gf / peak);
    std::fflush(stdout);
  }
  const std::vector<WindowShape> windows = {
      {"window 2D: 3 heads d 32, 56x56 grid, 7x7 windows", 3, 32, 2, {56, 56, 1}, {7, 7, 1}},
      {"window 3D: 4 heads d 32, 32^3 grid, 8^3 windows", 4, 32, 3, {32, 32, 32}, {8, 8, 8}},
  };
  for (const WindowShape& w : windows)
    if (std::string(w.name).find(only) != std::string::npos) bench_window(w, rounds, peak);
  return 0;
}
