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

// The parameters every consumer reads (tiles, empty rows, CPU and CUDA),
// made once by the C ABI entry points after attnopt_flash_params_check: the
// window clamped, so no consumer sees the caller's unbounded value (the
// empty-row pass overflowed on a window of INT64_MAX, issue 34).
inline attnopt_flash_params clamped_params(const attnopt_flash_params& p) {
  attnopt_flash_params c = p;
  c.window = effective_window(p);
  return c;
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_PARAMS_H_
