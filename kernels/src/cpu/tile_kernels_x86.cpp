// The tile kernels for x86-64 AVX-512 and AVX2+FMA. The file is compiled with
// the baseline flags; only the functions inside the target regions use the
// wider instructions, and cpu_isa.cpp calls them only where the processor
// has them, so the library still runs on any x86-64.
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common/numeric.h"
#include "cpu/attention_core.h"
#include "cpu/cpu_isa.h"

#if defined(__clang__)
#define ATTNOPT_TARGET_BEGIN(t) _Pragma("clang attribute push(__attribute__((target(" #t "))), apply_to = function)")
#define ATTNOPT_TARGET_END _Pragma("clang attribute pop")
#else
#define ATTNOPT_PRAGMA(x) _Pragma(#x)
#define ATTNOPT_TARGET_BEGIN(t) _Pragma("GCC push_options") ATTNOPT_PRAGMA(GCC target(t))
#define ATTNOPT_TARGET_END _Pragma("GCC pop_options")
#endif

ATTNOPT_TARGET_BEGIN("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
namespace attnopt {
namespace isa_avx512 {
#define ATTNOPT_W 16
#define ATTNOPT_R 4
#define ATTNOPT_S_NV 4
#define ATTNOPT_PV_NV 4
#define ATTNOPT_F16C 1
#define ATTNOPT_ISA 2
#include "cpu/tile_kernels.inc"
#undef ATTNOPT_W
#undef ATTNOPT_R
#undef ATTNOPT_S_NV
#undef ATTNOPT_PV_NV
#undef ATTNOPT_F16C
#undef ATTNOPT_ISA
}  // namespace isa_avx512
}  // namespace attnopt
ATTNOPT_TARGET_END

ATTNOPT_TARGET_BEGIN("avx2,fma,f16c")
namespace attnopt {
namespace isa_avx2 {
// 6 x 2 register blocks: 12 accumulators, as many FMA chains as Zen 2's two
// 5-cycle FMA pipes keep busy, and 15 of AVX2's 16 registers (4 x 3 would
// leave an 8-vector row's remainder at 4 x 2, 8 chains).
#define ATTNOPT_W 8
#define ATTNOPT_R 6
#define ATTNOPT_S_NV 2
#define ATTNOPT_PV_NV 2
#define ATTNOPT_F16C 1
#define ATTNOPT_ISA 1
#include "cpu/tile_kernels.inc"
#undef ATTNOPT_W
#undef ATTNOPT_R
#undef ATTNOPT_S_NV
#undef ATTNOPT_PV_NV
#undef ATTNOPT_F16C
#undef ATTNOPT_ISA
}  // namespace isa_avx2
}  // namespace attnopt
ATTNOPT_TARGET_END

#endif
