// One CPU FlashAttention call on the seed case (16 heads, d 4, a (1,1,N,N)
// bool mask with 70 % kept, f32) through a libattnopt_cpu.so given on the
// command line, so two builds can be compared in separate processes
// (callgrind_ab.sh counts the call's instructions, seed_ab.sh times it).
// Prints the call's wall and process CPU time and a checksum of the output.
// Usage: seed_call LIBATTNOPT_CPU.so [N] [CALLS]
#include <dlfcn.h>

#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "attnopt/attnopt.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: seed_call LIBATTNOPT_CPU.so [N] [CALLS]\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  using Fwd = int (*)(const attnopt_flash_params*);
  auto fwd = reinterpret_cast<Fwd>(dlsym(lib, "attnopt_cpu_flash_attention_fwd"));
  if (!fwd) {
    std::fprintf(stderr, "%s has no attnopt_cpu_flash_attention_fwd\n", argv[1]);
    return 1;
  }
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 10000, h = 16, d = 4;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 1;
  std::mt19937 rng(1);
  std::normal_distribution<float> val;
  std::bernoulli_distribution keep(0.7);
  std::vector<float> q(h * n * d), k(h * n * d), v(h * n * d), o(h * n * d);
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = val(rng);
  std::vector<uint8_t> mask(static_cast<size_t>(n * n));
  for (auto& m : mask) m = keep(rng);
  attnopt_flash_params p{};
  p.dtype = ATTNOPT_F32;
  p.batch = 1; p.heads_q = p.heads_kv = h; p.len_q = p.len_k = n; p.dim_qk = p.dim_v = d;
  const int64_t s[4] = {h * n * d, n * d, d, 1};
  p.q.data = q.data(); p.k.data = k.data(); p.v.data = v.data(); p.o = o.data();
  for (int a = 0; a < 4; ++a) p.q.stride[a] = p.k.stride[a] = p.v.stride[a] = p.o_stride[a] = s[a];
  p.mask_type = ATTNOPT_MASK_BOOL;
  p.mask = mask.data();
  p.mask_stride[2] = n;
  p.mask_stride[3] = 1;
  p.scale = 0.5f;
  for (int c = 0; c < calls; ++c) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    if (fwd(&p) != ATTNOPT_OK) return 1;
    const double cpu_ms = 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double sum = 0;
    for (float x : o) sum += x;
    std::printf("call %d: %.1f ms, cpu %.1f ms, checksum %.6f\n", c, ms, cpu_ms, sum);
  }
  return 0;
}
