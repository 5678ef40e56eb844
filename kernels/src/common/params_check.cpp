// Argument validation shared by the CPU and CUDA entry points, so both reject
// exactly the same inputs.
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "attnopt/attnopt.h"
#include "common/checked.h"
#include "common/params.h"
#include "common/window_geometry.h"

namespace {

// The enum fields as the caller stored them: a C or ctypes caller may store
// any int there, and loading such a value as the C++ enum type is undefined,
// so they are read as ints until checked.
template <typename E>
int raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "the C ABI's enums are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

bool valid_dtype(const attnopt_dtype& t) {
  const int v = raw_enum(t);
  return v == ATTNOPT_F32 || v == ATTNOPT_F16 || v == ATTNOPT_BF16;
}

// B, Hq and Hkv >= 1, Hq a multiple of Hkv, and B * Hq (the kernels' outer
// work count) representable.
bool valid_heads(int64_t b, int64_t hq, int64_t hkv) {
  int64_t bh = 0;
  return b >= 1 && hq >= 1 && hkv >= 1 && hq % hkv == 0 && attnopt::mul_within(b, hq, attnopt::kInt64Max, &bh);
}

// The head sizes the kernels take (attnopt_limits.h, from internal/opdef).
bool valid_dims(int64_t dqk, int64_t dv) {
  return dqk >= ATTNOPT_HEAD_DIM_MIN && dqk <= ATTNOPT_HEAD_DIM_MAX && dv >= ATTNOPT_HEAD_DIM_MIN &&
         dv <= ATTNOPT_HEAD_DIM_MAX;
}

// The scores are scale * Q.K: a scale that is not a finite positive number
// has no attention meaning (ONNX Attention refuses it too).
bool valid_scale(float s) { return std::isfinite(s) && s > 0.0f; }

// The shared part: a known type, heads and head sizes the kernels take,
// lengths >= 0 whose sum fits (causal and window bounds are formed from
// i + Nk - Nq), operands present wherever they have elements, and Q, K, V
// and O addressable through their strides at their logical extents with
// each one's size in bytes representable (the memory must exist; this also
// bounds every length and the kernels' work counts).
bool valid_qkv(const attnopt_qkv& s) {
  if (!valid_dtype(s.dtype) || !valid_heads(s.batch, s.heads_q, s.heads_kv) || !valid_dims(s.dim_qk, s.dim_v) ||
      s.len_q < 0 || s.len_k < 0)
    return false;
  int64_t total = 0;
  if (!attnopt::add_within(s.len_q, s.len_k, attnopt::kInt64Max, &total)) return false;
  if (s.len_q > 0 && (!s.o || !s.q.data)) return false;
  if (s.len_k > 0 && (!s.k.data || !s.v.data)) return false;
  const int64_t qe[4] = {s.batch, s.heads_q, s.len_q, s.dim_qk}, ke[4] = {s.batch, s.heads_kv, s.len_k, s.dim_qk},
                ve[4] = {s.batch, s.heads_kv, s.len_k, s.dim_v}, oe[4] = {s.batch, s.heads_q, s.len_q, s.dim_v};
  const int64_t elem = s.dtype == ATTNOPT_F32 ? 4 : 2;
  for (const int64_t* e : {qe, ke, ve, oe}) {
    int64_t n = 0;
    if (!attnopt::product_within(e, 4, attnopt::kInt64Max / elem, &n)) return false;
  }
  return attnopt::extent_fits(qe, s.q.stride) && attnopt::extent_fits(ke, s.k.stride) &&
         attnopt::extent_fits(ve, s.v.stride) && attnopt::extent_fits(oe, s.o_stride);
}

// A fill is what the source added to a dropped key's score: -inf or finite.
bool valid_fill(float f) { return !std::isnan(f) && f != INFINITY; }

}  // namespace

extern "C" {

const char* attnopt_status_string(int status) {
  switch (status) {
    case ATTNOPT_OK: return "ok";
    case ATTNOPT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ATTNOPT_ERR_NO_CUDA: return "attnopt was built without CUDA";
    case ATTNOPT_ERR_CUDA: return "CUDA error";
    case ATTNOPT_ERR_UNSUPPORTED: return "unsupported configuration";
    default: return "unknown attnopt status";
  }
}

int attnopt_flash_params_check_v2(const attnopt_flash_params_v2* p) {
  if (!p || !valid_qkv(p->qkv) || !valid_scale(p->scale)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  // A sliding window bounds the keys below the causal limit: it needs causal.
  // (Any size is accepted; the kernels clamp it to Nk: common/params.h.)
  if (p->window < 0 || (p->window > 0 && !p->causal)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  // Rows with no visible key: a known mode, and fills that are -inf or finite.
  if (p->empty_rows < ATTNOPT_EMPTY_ZERO || p->empty_rows > ATTNOPT_EMPTY_LITERAL_ZERO ||
      (p->fill_once != 0 && p->fill_once != 1) || !valid_dtype(p->fill_dtype) || !valid_fill(p->mask_fill) ||
      !valid_fill(p->causal_fill))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  // softcap: 0 (none) or a finite cap > 0; NaN fails both comparisons.
  if (!(p->softcap >= 0.0f) || !(p->softcap <= std::numeric_limits<float>::max()))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  // mask_drop: 0 (only -inf hides a key) or a finite magnitude > 0.
  if (!(p->mask_drop >= 0.0f) || !(p->mask_drop <= std::numeric_limits<float>::max()))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  switch (raw_enum(p->mask_type)) {
    case ATTNOPT_MASK_NONE: break;
    case ATTNOPT_MASK_BOOL:
    case ATTNOPT_MASK_F32:
    case ATTNOPT_MASK_F16:
    case ATTNOPT_MASK_BF16: {
      if (!p->mask) return ATTNOPT_ERR_INVALID_ARGUMENT;
      const int64_t me[4] = {p->qkv.batch, p->qkv.heads_q, p->qkv.len_q, p->qkv.len_k};
      if (!attnopt::extent_fits(me, p->mask_stride)) return ATTNOPT_ERR_INVALID_ARGUMENT;
      break;
    }
    default: return ATTNOPT_ERR_INVALID_ARGUMENT;
  }
  return ATTNOPT_OK;
}

int attnopt_window_params_check_v2(const attnopt_window_params_v2* p) {
  if (!p || !valid_qkv(p->qkv) || !valid_scale(p->scale)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  attnopt::WindowGeometry g;
  // Overflow-checked: a grid whose product wraps to len is refused here.
  if (!attnopt::make_window_geometry(p->ndim, p->grid, p->window, p->shift, &g))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  const int64_t n = attnopt::window_tokens(g);
  if (p->qkv.len_q != n || p->qkv.len_k != n) return ATTNOPT_ERR_INVALID_ARGUMENT;
  return ATTNOPT_OK;
}

// Version 1: converted (common/params.h), then the same rules.
int attnopt_flash_params_check(const attnopt_flash_params* p) {
  if (!p) return ATTNOPT_ERR_INVALID_ARGUMENT;
  const attnopt_flash_params_v2 v = attnopt::v2_of(*p);
  return attnopt_flash_params_check_v2(&v);
}

int attnopt_window_params_check(const attnopt_window_params* p) {
  if (!p) return ATTNOPT_ERR_INVALID_ARGUMENT;
  const attnopt_window_params_v2 v = attnopt::v2_of(*p);
  return attnopt_window_params_check_v2(&v);
}

}  // extern "C"
