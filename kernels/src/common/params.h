// The version-1 structs' one conversion to version 2 (every entry point
// reads version 2 only), and the derived parameters the CPU and CUDA entry
// points both use, computed after attnopt_*_params_check_v2 accepted them.
#ifndef ATTNOPT_COMMON_PARAMS_H_
#define ATTNOPT_COMMON_PARAMS_H_

#include <cstdint>
#include <cstring>

#include "attnopt/attnopt.h"

namespace attnopt {

// The shared part of a version-1 struct: both have the same leading fields
// up to o_stride, WindowAttention with one len for Nq and Nk.
template <typename V1>
inline attnopt_qkv qkv_of(const V1& p, int64_t len_q, int64_t len_k) {
  attnopt_qkv s{};
  std::memcpy(&s.dtype, &p.dtype, sizeof s.dtype);  // as stored: checked as an int later
  s.batch = p.batch;
  s.heads_q = p.heads_q;
  s.heads_kv = p.heads_kv;
  s.len_q = len_q;
  s.len_k = len_k;
  s.dim_qk = p.dim_qk;
  s.dim_v = p.dim_v;
  s.q = p.q;
  s.k = p.k;
  s.v = p.v;
  s.o = p.o;
  std::memcpy(s.o_stride, p.o_stride, sizeof s.o_stride);
  return s;
}

inline attnopt_flash_params_v2 v2_of(const attnopt_flash_params& p) {
  attnopt_flash_params_v2 v{};
  v.qkv = qkv_of(p, p.len_q, p.len_k);
  std::memcpy(&v.mask_type, &p.mask_type, sizeof v.mask_type);
  v.mask = p.mask;
  std::memcpy(v.mask_stride, p.mask_stride, sizeof v.mask_stride);
  v.scale = p.scale;
  v.causal = p.causal;
  v.window = p.window;
  v.empty_rows = p.empty_rows;
  v.mask_fill = p.mask_fill;
  v.causal_fill = p.causal_fill;
  v.fill_once = p.fill_once;
  std::memcpy(&v.fill_dtype, &p.fill_dtype, sizeof v.fill_dtype);
  v.softcap = p.softcap;
  v.mask_drop = p.mask_drop;
  return v;
}

inline attnopt_window_params_v2 v2_of(const attnopt_window_params& p) {
  attnopt_window_params_v2 v{};
  v.qkv = qkv_of(p, p.len, p.len);
  v.ndim = p.ndim;
  std::memcpy(v.grid, p.grid, sizeof v.grid);
  std::memcpy(v.window, p.window, sizeof v.window);
  std::memcpy(v.shift, p.shift, sizeof v.shift);
  v.scale = p.scale;
  return v;
}

// The sliding window clamped to Nk. Once W >= Nk every row i < Nq admits all
// keys j > i + Nk - Nq - W, so a larger window changes nothing; clamped, the
// kernels' bounds i + Nk - Nq - W + 1 stay within +-(Nq + Nk), which the
// check keeps representable (a window near INT64_MAX overflowed them).
inline int64_t effective_window(const attnopt_flash_params_v2& p) {
  return p.window > p.qkv.len_k ? p.qkv.len_k : p.window;
}

// The parameters every consumer reads (tiles, empty rows, CPU and CUDA),
// made once by the C ABI entry points after attnopt_flash_params_check_v2:
// the window clamped, so no consumer sees the caller's unbounded value (the
// empty-row pass overflowed on a window of INT64_MAX, issue 34).
inline attnopt_flash_params_v2 clamped_params(const attnopt_flash_params_v2& p) {
  attnopt_flash_params_v2 c = p;
  c.window = effective_window(p);
  return c;
}

}  // namespace attnopt

#endif  // ATTNOPT_COMMON_PARAMS_H_
