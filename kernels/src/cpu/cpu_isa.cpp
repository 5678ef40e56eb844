#include "cpu/cpu_isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace attnopt {
namespace isa_generic {
extern const TileKernels kKernels;
}
#if defined(__x86_64__) || defined(__i386__)
namespace isa_avx2 {
extern const TileKernels kKernels;
}
namespace isa_avx512 {
extern const TileKernels kKernels;
}
#endif

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return "avx512";
    case CpuIsa::kAvx2: return "avx2";
    default: return "generic";
  }
}

const TileKernels* cpu_tile_kernels_for(CpuIsa isa) {
  switch (isa) {
#if defined(__x86_64__) || defined(__i386__)
    case CpuIsa::kAvx512: return &isa_avx512::kKernels;
    case CpuIsa::kAvx2: return &isa_avx2::kKernels;
#endif
    case CpuIsa::kGeneric: return &isa_generic::kKernels;
    default: return nullptr;
  }
}

bool cpu_isa_supported(CpuIsa isa) {
  if (isa == CpuIsa::kGeneric) return true;
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's checks include the OS's support for the wider registers (XGETBV).
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  if (isa == CpuIsa::kAvx2) return avx2;
  if (isa == CpuIsa::kAvx512)
    return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
  return false;
}

namespace {

CpuIsa best_isa() {
  CpuIsa cap = CpuIsa::kAvx512;
  if (const char* env = std::getenv("ATTNOPT_CPU_ISA")) {
    if (std::strcmp(env, "generic") == 0) cap = CpuIsa::kGeneric;
    if (std::strcmp(env, "avx2") == 0) cap = CpuIsa::kAvx2;
  }
  for (int i = static_cast<int>(cap); i > 0; --i)
    if (cpu_isa_supported(static_cast<CpuIsa>(i))) return static_cast<CpuIsa>(i);
  return CpuIsa::kGeneric;
}

std::atomic<const TileKernels*> g_forced{nullptr};

}  // namespace

const TileKernels& cpu_tile_kernels() {
  if (const TileKernels* f = g_forced.load(std::memory_order_relaxed)) return *f;
  static const TileKernels* const best = cpu_tile_kernels_for(best_isa());
  return *best;
}

bool cpu_isa_force(CpuIsa isa) {
  const TileKernels* k = cpu_tile_kernels_for(isa);
  if (!k || !cpu_isa_supported(isa)) return false;
  g_forced.store(k);
  return true;
}

}  // namespace attnopt
