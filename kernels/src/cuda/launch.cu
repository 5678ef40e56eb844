// CUDA entry points of the C ABI: validate, translate the parameters into
// KernelArgs, and pick the kernel: on sm_90 the wgmma kernel where it
// applies and measured ahead (flash_wgmma.cu, hopper_wanted; ATTNOPT_CUDA_HOPPER
// =1/0 forces it on/off), else tensor cores (sm_80+, f16/bf16) when the
// shared-memory budget allows, the SIMT kernel otherwise. ATTNOPT_CUDA_PATH=
// simt forces the SIMT kernel (used by the GPU check to test both paths).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "attnopt/attnopt.h"
#include "common/checked.h"
#include "common/params.h"
#include "common/window_geometry.h"
#include "cuda/kernels.h"
#include "cuda/last_error.h"

namespace attnopt {
namespace cuda {
namespace {

// The error behind this thread's last ATTNOPT_ERR_CUDA (cuda/last_error.h).
thread_local cudaError_t last_error = cudaSuccess;

// failed keeps err for last_error_text and returns the C ABI's code for it.
int failed(cudaError_t err) {
  last_error = err;
  return ATTNOPT_ERR_CUDA;
}

// status is the C ABI's code for a launch's result: cudaErrorNotSupported
// (a configuration the kernel does not take) is ATTNOPT_ERR_UNSUPPORTED.
int status(cudaError_t err) {
  return err == cudaSuccess ? ATTNOPT_OK : err == cudaErrorNotSupported ? ATTNOPT_ERR_UNSUPPORTED : failed(err);
}

bool vec_ok(const void* p, const int64_t s[4], int64_t dim) {
  return s[3] == 1 && dim % 8 == 0 && s[0] % 8 == 0 && s[1] % 8 == 0 && s[2] % 8 == 0 &&
         reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// A bool mask whose rows can be read 8 keys (bytes) at a time.
bool mask_vec_ok(const attnopt_flash_params_v2* p) {
  const int64_t* s = p->mask_stride;
  return p->mask_type == ATTNOPT_MASK_BOOL && s[3] == 1 && s[0] % 8 == 0 && s[1] % 8 == 0 && s[2] % 8 == 0 &&
         reinterpret_cast<uintptr_t>(p->mask) % 8 == 0;
}

void copy4(int64_t dst[4], const int64_t src[4]) { std::memcpy(dst, src, 4 * sizeof(int64_t)); }

bool force_simt() {
  const char* e = std::getenv("ATTNOPT_CUDA_PATH");
  return e && std::strcmp(e, "simt") == 0;
}

// The part of KernelArgs both ops fill the same way: operands, sizes,
// group and scale (the one conversion of the C ABI's shared part).
KernelArgs args_of(const attnopt_qkv& s, float scale) {
  KernelArgs a{};
  a.q = s.q.data;
  a.k = s.k.data;
  a.v = s.v.data;
  a.o = s.o;
  copy4(a.qs, s.q.stride);
  copy4(a.ks, s.k.stride);
  copy4(a.vs, s.v.stride);
  copy4(a.os, s.o_stride);
  a.len_q = s.len_q;
  a.len_k = s.len_k;
  a.dqk = static_cast<int>(s.dim_qk);
  a.dv = static_cast<int>(s.dim_v);
  a.group = static_cast<int>(s.heads_q / s.heads_kv);
  a.scale = scale;
  a.q_vec = vec_ok(a.q, a.qs, a.dqk);
  a.k_vec = vec_ok(a.k, a.ks, a.dqk);
  a.v_vec = vec_ok(a.v, a.vs, a.dv);
  return a;
}

int dispatch(attnopt_dtype dtype, bool window, KernelArgs& a, const LaunchShape& s, void* stream) {
  if (s.batch > 65535 || s.heads_q > 65535) return ATTNOPT_ERR_UNSUPPORTED;  // grid y/z limits
  // Nothing to launch is right only for an empty output (Nq = 0); a window
  // geometry always has rows and windows once the check accepted it, and
  // returning OK there would hand back an output nothing wrote.
  if (s.rows == 0 || s.segments == 0) return !window && s.rows == 0 ? ATTNOPT_OK : ATTNOPT_ERR_INVALID_ARGUMENT;
  // The SIMT kernel's smallest query tile is 8 rows: check grid x for it
  // (divided, not multiplied, so that it cannot overflow).
  if (attnopt::ceil_div(s.rows, 8) > INT32_MAX / s.segments) return ATTNOPT_ERR_UNSUPPORTED;
  int dev = 0, major = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (err != cudaSuccess) return failed(err);
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (dtype != ATTNOPT_F32 && major >= 9 && !force_simt()) {
    err = launch_wgmma(dtype, window, a, s, st);
    if (err == cudaSuccess) return ATTNOPT_OK;
    if (err != cudaErrorNotSupported) return failed(err);
  }
  if (dtype != ATTNOPT_F32 && major >= 8 && !force_simt()) {
    err = launch_mma(dtype, window, a, s, st);
    if (err == cudaSuccess) return ATTNOPT_OK;
    if (err != cudaErrorNotSupported) return failed(err);
  }
  err = launch_simt(dtype, window, a, s, st);
  return err == cudaSuccess ? ATTNOPT_OK : failed(err);
}

}  // namespace

const char* last_error_text() { return last_error == cudaSuccess ? "" : cudaGetErrorString(last_error); }
}  // namespace cuda
}  // namespace attnopt

extern "C" {

int attnopt_has_cuda(void) { return 1; }

int attnopt_cuda_flash_attention_fwd_v2(const attnopt_flash_params_v2* caller, void* stream) {
  using namespace attnopt::cuda;
  last_error = cudaSuccess;
  const int checked = attnopt_flash_params_check_v2(caller);
  if (checked != ATTNOPT_OK) return checked;
  const attnopt_flash_params_v2 clamped = attnopt::clamped_params(*caller);  // the kernels and the row pass read these
  const attnopt_flash_params_v2* p = &clamped;
  KernelArgs a = args_of(p->qkv, p->scale);
  a.mask_type = p->mask_type;
  a.mask = p->mask;
  if (p->mask_type != ATTNOPT_MASK_NONE) copy4(a.ms, p->mask_stride);  // else unchecked: left 0
  a.band = attnopt::band_of(*p);  // the window clamped to Nk: the kernels' bounds cannot overflow
  a.softcap = p->softcap;
  a.mask_vec = mask_vec_ok(p);
  const LaunchShape shape{p->qkv.batch, p->qkv.heads_q, 1, p->qkv.len_q};
  const int rc = dispatch(p->qkv.dtype, false, a, shape, stream);
  if (rc != ATTNOPT_OK) return rc;
  return status(launch_empty_rows(p->qkv.dtype, a, *p, static_cast<cudaStream_t>(stream)));
}

int attnopt_cuda_window_attention_fwd_v2(const attnopt_window_params_v2* p, void* stream) {
  using namespace attnopt::cuda;
  last_error = cudaSuccess;
  const int checked = attnopt_window_params_check_v2(p);
  if (checked != ATTNOPT_OK) return checked;
  KernelArgs a = args_of(p->qkv, p->scale);
  if (!attnopt::make_window_geometry(p->ndim, p->grid, p->window, p->shift, &a.geo))
    return ATTNOPT_ERR_INVALID_ARGUMENT;  // unreachable after the check; kept next to its use
  const LaunchShape shape{p->qkv.batch, p->qkv.heads_q, a.geo.num_windows(), a.geo.max_window_size()};
  return dispatch(p->qkv.dtype, true, a, shape, stream);
}

// Version 1: converted once (common/params.h), then the same calls.
int attnopt_cuda_flash_attention_fwd(const attnopt_flash_params* caller, void* stream) {
  if (!caller) return ATTNOPT_ERR_INVALID_ARGUMENT;
  const attnopt_flash_params_v2 p = attnopt::v2_of(*caller);
  return attnopt_cuda_flash_attention_fwd_v2(&p, stream);
}

int attnopt_cuda_window_attention_fwd(const attnopt_window_params* caller, void* stream) {
  if (!caller) return ATTNOPT_ERR_INVALID_ARGUMENT;
  const attnopt_window_params_v2 p = attnopt::v2_of(*caller);
  return attnopt_cuda_window_attention_fwd_v2(&p, stream);
}

}  // extern "C"
