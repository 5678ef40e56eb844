// One measurement of the CPU regression benchmark (bench/cpu_ab.py): loads a
// libattnopt_cpu.so given on the command line (dlopen, so one driver serves
// the library of any commit through the C ABI), builds one shape of the fixed
// table below and prints the time per call and a checksum of the output.
//
//   cpu_ab_driver --list [--quick]
//   cpu_ab_driver LIB SHAPE [--quick] [--threads N] [--wall]
//   cpu_ab_driver LIB SHAPE --pair LIB_B [--samples N] [--quick] [--threads N] [--wall]
//
// Time per call: after one warm-up call, the fastest of 3 batches, each as
// many calls as fill about 0.1 s (one batch of one call when a call takes
// over 0.3 s: the rounds of bench/cpu_ab.py repeat it). Process CPU time by
// default (other jobs share this machine's cores; CPU time only counts while
// this process runs; with 2 threads it is the sum of both), wall time with
// --wall. --quick uses the table's smaller sizes (CI).
//
// --pair loads a second library into the same process and alternates the
// two, A B B A ..., one sample (a batch of about 20 ms of calls) each: a
// drift of the machine (another job, the clock) hits both sides of adjacent
// samples alike, so the median of the per-pair ratios B/A resolves smaller
// differences than separate processes do. Prints per side min and median
// seconds per call, then the ratios' median and quartiles, and whether the
// outputs' checksums agree.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attnopt/attnopt.h"
#include "common/numeric.h"

namespace {

enum class Mask { kNone, kBoolFull, kKeyPadding };

struct Shape {
  const char* name;
  int64_t b, hq, hkv, nq, nk, dqk, dv;
  Mask mask;
  bool causal;
  attnopt_dtype dtype;
  int64_t quick_nq, quick_nk;  // --quick sizes
  float softcap = 0;            // > 0: Gemma 2's score cap
};

// The regression table (kernels/README.md "CPU regression benchmark").
const Shape kShapes[] = {
    {"seed h16 d4 bool N10000", 1, 16, 16, 10000, 10000, 4, 4, Mask::kBoolFull, false, ATTNOPT_F32, 2048, 2048},
    {"d64 h4 N8192", 1, 4, 4, 8192, 8192, 64, 64, Mask::kNone, false, ATTNOPT_F32, 1024, 1024},
    {"d128 h1 N16384", 1, 1, 1, 16384, 16384, 128, 128, Mask::kNone, false, ATTNOPT_F32, 2048, 2048},
    {"sagan 8/64 N16384", 1, 1, 1, 16384, 16384, 8, 64, Mask::kNone, false, ATTNOPT_F32, 4096, 4096},
    {"causal gqa 32/8 d128 N2048", 1, 32, 8, 2048, 2048, 128, 128, Mask::kNone, true, ATTNOPT_F32, 512, 512},
    {"key padding b8 h12 d64 N512", 8, 12, 12, 512, 512, 64, 64, Mask::kKeyPadding, false, ATTNOPT_F32, 128, 128},
    {"bert f16 b8 h12 d64 N512", 8, 12, 12, 512, 512, 64, 64, Mask::kNone, false, ATTNOPT_F16, 128, 128},
    {"bert f32 b8 h12 d64 N512", 8, 12, 12, 512, 512, 64, 64, Mask::kNone, false, ATTNOPT_F32, 128, 128},
    {"tiny vit h4 d16 N17", 1, 4, 4, 17, 17, 16, 16, Mask::kNone, false, ATTNOPT_F32, 17, 17},
    {"decode 32/8 d128 Nk4096", 1, 32, 8, 1, 4096, 128, 128, Mask::kNone, false, ATTNOPT_F32, 1, 4096},
    {"decode 32/8 d128 Nk32768", 1, 32, 8, 1, 32768, 128, 128, Mask::kNone, false, ATTNOPT_F32, 1, 8192},
    // Gemma 2's attention softcap (50) and its final-logit value (30) on the score path.
    {"gemma softcap 50 causal 8/4 d256 N2048", 1, 8, 4, 2048, 2048, 256, 256, Mask::kNone, true, ATTNOPT_F32, 256, 256, 50.0f},
    {"softcap 30 h4 d128 N4096", 1, 4, 4, 4096, 4096, 128, 128, Mask::kNone, false, ATTNOPT_F32, 512, 512, 30.0f},
};

double now(bool wall) {
  timespec ts;
  clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// xorshift64: fast enough for the 100 M mask bytes of the seed case.
struct Rng {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  float uniform() { return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }  // [-1, 1)
};

struct Buffers {
  std::vector<float> f32[4];     // q, k, v, o
  std::vector<uint16_t> f16[4];  // the same, 16-bit
  std::vector<uint8_t> mask;
};

void* fill(Buffers& bu, int i, attnopt_dtype t, int64_t n, Rng& rng, bool random) {
  if (t == ATTNOPT_F32) {
    bu.f32[i].resize(n);
    if (random)
      for (auto& x : bu.f32[i]) x = rng.uniform();
    return bu.f32[i].data();
  }
  bu.f16[i].resize(n);
  if (random)
    for (auto& x : bu.f16[i])
      x = t == ATTNOPT_F16 ? attnopt::float_to_half(rng.uniform()) : attnopt::float_to_bf16(rng.uniform());
  return bu.f16[i].data();
}

void contiguous(int64_t h, int64_t n, int64_t d, int64_t s[4]) {
  s[3] = 1;
  s[2] = d;
  s[1] = n * d;
  s[0] = h * n * d;
}

attnopt_flash_params make(const Shape& s, bool quick, Buffers& bu) {
  const int64_t nq = quick ? s.quick_nq : s.nq, nk = quick ? s.quick_nk : s.nk;
  Rng rng;
  attnopt_flash_params p{};
  p.dtype = s.dtype;
  p.batch = s.b;
  p.heads_q = s.hq;
  p.heads_kv = s.hkv;
  p.len_q = nq;
  p.len_k = nk;
  p.dim_qk = s.dqk;
  p.dim_v = s.dv;
  p.q.data = fill(bu, 0, s.dtype, s.b * s.hq * nq * s.dqk, rng, true);
  p.k.data = fill(bu, 1, s.dtype, s.b * s.hkv * nk * s.dqk, rng, true);
  p.v.data = fill(bu, 2, s.dtype, s.b * s.hkv * nk * s.dv, rng, true);
  p.o = fill(bu, 3, s.dtype, s.b * s.hq * nq * s.dv, rng, false);
  contiguous(s.hq, nq, s.dqk, p.q.stride);
  contiguous(s.hkv, nk, s.dqk, p.k.stride);
  contiguous(s.hkv, nk, s.dv, p.v.stride);
  contiguous(s.hq, nq, s.dv, p.o_stride);
  p.scale = 1.0f / std::sqrt(static_cast<float>(s.dqk));
  p.causal = s.causal;
  p.softcap = s.softcap;
  if (s.mask == Mask::kBoolFull) {  // (1, 1, Nq, Nk), 70 % attend, as the seed model
    bu.mask.resize(nq * nk);
    for (auto& m : bu.mask) m = (rng.next() >> 33) % 10 < 7;
    p.mask_stride[2] = nk;
    p.mask_stride[3] = 1;
  } else if (s.mask == Mask::kKeyPadding) {  // (B, 1, 1, Nk): batch i keeps the first Nk - i * Nk / 16 keys
    bu.mask.resize(s.b * nk);
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t j = 0; j < nk; ++j) bu.mask[b * nk + j] = j < nk - b * nk / 16;
    p.mask_stride[0] = nk;
    p.mask_stride[3] = 1;
  }
  if (s.mask != Mask::kNone) {
    p.mask_type = ATTNOPT_MASK_BOOL;
    p.mask = bu.mask.data();
  }
  return p;
}

double checksum(const Buffers& bu, attnopt_dtype t) {
  double sum = 0;
  if (t == ATTNOPT_F32) {
    for (float x : bu.f32[3]) sum += std::fabs(x);
  } else {
    for (uint16_t x : bu.f16[3]) sum += std::fabs(t == ATTNOPT_F16 ? attnopt::half_to_float(x) : attnopt::bf16_to_float(x));
  }
  return sum;
}

int usage() {
  std::fprintf(stderr,
               "usage: cpu_ab_driver --list [--quick] | LIB SHAPE [--quick] [--threads N] [--wall] "
               "[--pair LIB_B [--samples N]]\n");
  return 2;
}

using Fwd = int (*)(const attnopt_flash_params*);
using SetThreads = void (*)(int);

// The library's entry points, or null (with the reason printed).
Fwd open_library(const std::string& path, int threads) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "cpu_ab_driver: %s\n", dlerror());
    return nullptr;
  }
  auto fwd = reinterpret_cast<Fwd>(dlsym(lib, "attnopt_cpu_flash_attention_fwd"));
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(lib, "attnopt_cpu_set_num_threads"));
  if (!fwd || !set_threads) {
    std::fprintf(stderr, "cpu_ab_driver: %s lacks the attnopt CPU entry points\n", path.c_str());
    return nullptr;
  }
  set_threads(threads);
  return fwd;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// --pair: A and B alternated in this process (see the header).
int run_pair(Fwd fa, Fwd fb, const Shape& shape, bool quick, bool wall, int samples) {
  Buffers ba, bb;
  const attnopt_flash_params pa = make(shape, quick, ba), pb = make(shape, quick, bb);
  double t0 = now(wall);
  if (fa(&pa) != ATTNOPT_OK || fb(&pb) != ATTNOPT_OK) {
    std::fprintf(stderr, "cpu_ab_driver: the call failed\n");
    return 1;
  }
  const double first = (now(wall) - t0) / 2;
  const long reps = std::max(1L, static_cast<long>(0.02 / std::max(first, 1e-7)));
  auto sample = [&](Fwd f, const attnopt_flash_params& p) {
    const double s0 = now(wall);
    for (long r = 0; r < reps; ++r) f(&p);
    return (now(wall) - s0) / reps;
  };
  std::vector<double> ta, tb, ratio;
  for (int i = 0; i < samples; ++i) {
    double a, b;
    if (i % 2 == 0) {
      a = sample(fa, pa);
      b = sample(fb, pb);
    } else {
      b = sample(fb, pb);
      a = sample(fa, pa);
    }
    ta.push_back(a);
    tb.push_back(b);
    ratio.push_back(b / a);
  }
  const double ca = checksum(ba, shape.dtype), cb = checksum(bb, shape.dtype);
  std::printf("A min %.4g med %.4g | B min %.4g med %.4g | B/A pairs median %.3f (quartiles %.3f-%.3f, %d pairs) | "
              "same output %s\n",
              *std::min_element(ta.begin(), ta.end()), median(ta), *std::min_element(tb.begin(), tb.end()), median(tb),
              median(ratio), quantile(ratio, 0.25), quantile(ratio, 0.75), samples, ca == cb ? "yes" : "NO");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, wall = false, list = false;
  int threads = 1, samples = 41;
  std::string pair;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--wall") wall = true;
    else if (a == "--list") list = true;
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--pair" && i + 1 < argc) pair = argv[++i];
    else if (a == "--samples" && i + 1 < argc) samples = std::atoi(argv[++i]);
    else if (a.rfind("--", 0) == 0) return usage();
    else pos.push_back(a);
  }
  if (list) {
    for (const Shape& s : kShapes) std::printf("%s\n", s.name);
    return 0;
  }
  if (pos.size() != 2 || threads < 1 || samples < 1) return usage();
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes)
    if (pos[1] == s.name) shape = &s;
  if (!shape) {
    std::fprintf(stderr, "cpu_ab_driver: unknown shape '%s' (see --list)\n", pos[1].c_str());
    return 2;
  }
  const Fwd fwd = open_library(pos[0], threads);
  if (!fwd) return 2;
  if (!pair.empty()) {
    const Fwd fb = open_library(pair, threads);
    if (!fb) return 2;
    return run_pair(fwd, fb, *shape, quick, wall, samples);
  }
  Buffers bu;
  const attnopt_flash_params p = make(*shape, quick, bu);
  double t0 = now(wall);
  if (fwd(&p) != ATTNOPT_OK) {
    std::fprintf(stderr, "cpu_ab_driver: the call failed\n");
    return 1;
  }
  const double first = now(wall) - t0;
  const long reps = std::max(1L, static_cast<long>(0.1 / std::max(first, 1e-7)));
  double best = 1e30;
  for (int batch = 0; batch < (first > 0.3 ? 1 : 3); ++batch) {
    t0 = now(wall);
    for (long r = 0; r < reps; ++r) fwd(&p);
    best = std::min(best, (now(wall) - t0) / reps);
  }
  std::printf("%.9g %.17g\n", best, checksum(bu, shape->dtype));
  return 0;
}
