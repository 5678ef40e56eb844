// Argument validation shared by the CPU and CUDA entry points, so both reject
// exactly the same inputs.
#include "attnopt/attnopt.h"
#include "common/window_geometry.h"

#include <limits>

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

static bool valid_dtype(attnopt_dtype t) {
  return t == ATTNOPT_F32 || t == ATTNOPT_F16 || t == ATTNOPT_BF16;
}

// A fill is what the source added to a dropped key's score: -inf or finite.
static bool valid_fill(float f) { return f == f && f != std::numeric_limits<float>::infinity(); }

static bool valid_heads(int64_t b, int64_t hq, int64_t hkv) {
  return b >= 1 && hq >= 1 && hkv >= 1 && hq % hkv == 0;
}

static bool valid_dims(int64_t dqk, int64_t dv) { return dqk >= 1 && dqk <= 256 && dv >= 1 && dv <= 256; }

int attnopt_flash_params_check(const attnopt_flash_params* p) {
  if (!p || !valid_dtype(p->dtype) || !valid_heads(p->batch, p->heads_q, p->heads_kv) ||
      !valid_dims(p->dim_qk, p->dim_v) || p->len_q < 0 || p->len_k < 0)
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (p->len_q > 0 && (!p->o || !p->q.data)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (p->len_k > 0 && (!p->k.data || !p->v.data)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  // A sliding window bounds the keys below the causal limit: it needs causal.
  if (p->window < 0 || (p->window > 0 && !p->causal)) return ATTNOPT_ERR_INVALID_ARGUMENT;
  // Rows with no visible key: a known mode, and fills that are -inf or finite.
  if (p->empty_rows < ATTNOPT_EMPTY_ZERO || p->empty_rows > ATTNOPT_EMPTY_LITERAL_ZERO ||
      (p->fill_once != 0 && p->fill_once != 1) || !valid_dtype(p->fill_dtype) || !valid_fill(p->mask_fill) ||
      !valid_fill(p->causal_fill))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  switch (p->mask_type) {
    case ATTNOPT_MASK_NONE: break;
    case ATTNOPT_MASK_BOOL:
    case ATTNOPT_MASK_F32:
    case ATTNOPT_MASK_F16:
    case ATTNOPT_MASK_BF16:
      if (!p->mask) return ATTNOPT_ERR_INVALID_ARGUMENT;
      break;
    default: return ATTNOPT_ERR_INVALID_ARGUMENT;
  }
  return ATTNOPT_OK;
}

int attnopt_window_params_check(const attnopt_window_params* p) {
  if (!p || !valid_dtype(p->dtype) || !valid_heads(p->batch, p->heads_q, p->heads_kv) ||
      !valid_dims(p->dim_qk, p->dim_v))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  attnopt::WindowGeometry g;
  if (!attnopt::make_window_geometry(p->ndim, p->grid, p->window, p->shift, &g))
    return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (g.grid[0] * g.grid[1] * g.grid[2] != p->len) return ATTNOPT_ERR_INVALID_ARGUMENT;
  if (!p->q.data || !p->k.data || !p->v.data || !p->o) return ATTNOPT_ERR_INVALID_ARGUMENT;
  return ATTNOPT_OK;
}

}  // extern "C"
