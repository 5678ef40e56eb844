// The portable tile kernels: 4-lane vectors in the baseline instruction set
// (SSE2 on x86-64, NEON on arm64). Always built; the fallback everywhere.
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common/numeric.h"
#include "cpu/attention_core.h"
#include "cpu/cpu_isa.h"

#if defined(__SSE2__)
#include <emmintrin.h>  // bool mask bits (tile_kernels.inc)
#endif

namespace attnopt {
namespace isa_generic {
#define ATTNOPT_W 4
#define ATTNOPT_R 4
#define ATTNOPT_S_NV 2
#define ATTNOPT_PV_NV 2
#define ATTNOPT_F16C 0
#define ATTNOPT_ISA 0
#include "cpu/tile_kernels.inc"
}  // namespace isa_generic
}  // namespace attnopt
