// Derived parameters the CPU and CUDA entry points both use, computed after
// attnopt_*_params_check accepted the parameters.
#ifndef ATTNOPT_COMMON_PARAMS_H_
#define ATTNOPT_COMMON_PARAMS_H_

#include <cstdint>

#include "attnopt/attnopt.h"

namespace attnopt {

// The sliding window clamped to Nk. Once W >= Nk every row i < Nq admits all
// keys j > i + Nk - Nq - W, so a larger window changes nothing; clamped, the
// kernels' bounds i + Nk - Nq - W + 1 stay within +-(Nq + Nk), which the
// check keeps representable (a window near INT64_MAX overflowed them).
inline int64_t effective_window(const attnopt_flash_params& p) {
  return p.window > p.len_k ? p.len_k : p.window;
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_PARAMS_H_
