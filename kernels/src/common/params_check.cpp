// Argument validation shared by the CPU and CUDA entry points, so both reject
// exactly the same inputs.
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "attnopt/attnopt.h"
#include "common/checked.h"
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

// Q, K, V and O addressable through their strides at their logical
// extents, and each one's logical size in bytes representable (the memory
// must exist; this also bounds every length and the kernels' work counts).
bool operands_fit(const attnopt_tensor& q, const attnopt_tensor& k, const attnopt_tensor& v,
                         const int64_t* o_stride, attnopt_dtype t, int64_t b, int64_t hq, int64_t hkv, int64_t nq,
                         int64_t nk, int64_t dqk, int64_t dv) {
  const int64_t qe[4] = {b, hq, nq, dqk}, ke[4] = {b, hkv, nk, dqk}, ve[4] = {b, hkv, nk, dv},
                oe[4] = {b, hq, nq, dv};
  const int64_t elem = t == ATTNOPT_F32 ? 4 : 2;
  for (const int64_t* e : {qe, ke, ve, oe}) {
    int64_t n = 0;
    if (!attnopt::product_within(e, 4, attnopt::kInt64Max / elem, &n)) return false;
  }
  return attnopt::extent_fits(qe, q.stride) && attnopt::extent_fits(ke, k.stride) &&
         attnopt::extent_fits(ve, v.stride) && attnopt::extent_fits(oe, o_stride);
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

int attnopt_flash_params_check(const attnopt_flash_params* p) {
  if (!p || !valid_dtype(p->dtype) || !valid_heads(p->batch, p->heads_q, p->heads_kv) ||
      !valid_dims(p->dim_qk, p->dim_v) || p->len_q < 0 || p->len_k < 0 || !valid_scale(p->scale))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  // Causal and window bounds are formed from i + Nk - Nq: Nq + Nk must fit.
  int64_t total = 0;
  if (!attnopt::add_within(p->len_q, p->len_k, attnopt::kInt64Max, &total)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (p->len_q > 0 && (!p->o || !p->q.data)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (p->len_k > 0 && (!p->k.data || !p->v.data)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (!operands_fit(p->q, p->k, p->v, p->o_stride, p->dtype, p->batch, p->heads_q, p->heads_kv, p->len_q,
                    p->len_k, p->dim_qk, p->dim_v))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
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
      const int64_t me[4] = {p->batch, p->heads_q, p->len_q, p->len_k};
      if (!attnopt::extent_fits(me, p->mask_stride)) return ATTNOPT_ERR_INVALID_ARGUMENT;
      break;
    }
    default: return ATTNOPT_ERR_INVALID_ARGUMENT;
  }
  return ATTNOPT_OK;
}

int attnopt_window_params_check(const attnopt_window_params* p) {
  if (!p || !valid_dtype(p->dtype) || !valid_heads(p->batch, p->heads_q, p->heads_kv) ||
      !valid_dims(p->dim_qk, p->dim_v) || !valid_scale(p->scale))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  attnopt::WindowGeometry g;
  // Overflow-checked: a grid whose product wraps to len is refused here.
  if (!attnopt::make_window_geometry(p->ndim, p->grid, p->window, p->shift, &g))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (attnopt::window_tokens(g) != p->len) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (!p->q.data || !p->k.data || !p->v.data || !p->o) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (!operands_fit(p->q, p->k, p->v, p->o_stride, p->dtype, p->batch, p->heads_q, p->heads_kv, p->len, p->len,
                    p->dim_qk, p->dim_v))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  return ATTNOPT_OK;
}

}  // extern "C"
