// The attnopt custom ops on ONNX Runtime's CUDA execution provider.
//
// compute() (op_kernels.cpp) has already read and checked the operands into
// the C ABI's parameters; here they are device pointers (the ops declare
// OrtMemTypeDefault inputs and outputs, which the CUDA EP keeps on the GPU).
// The kernels run on ORT's compute stream and need no scratch memory, so a
// call is one or two host attribute queries and a launch: no allocation, no
// copy and no host synchronisation; ORT orders the next node on the stream.
// Errors become ORT statuses that name the node and the operands.
#include <atomic>
#include <string>

#include "ort/op_kernels.h"

#ifdef ATTNOPT_WITH_CUDA
#include <cuda_runtime.h>

#include "cuda/last_error.h"
#endif

namespace attnopt_ort {
namespace {

#ifdef ATTNOPT_WITH_CUDA
// Compute capability (major*10 + minor) of a device, asked once per device.
int device_arch(int dev) {
  static std::atomic<int> cache[64];
  if (dev < 0 || dev >= 64) return -1;
  int v = cache[dev].load(std::memory_order_relaxed);
  if (v > 0) return v;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return -1;
  v = major * 10 + minor;
  cache[dev].store(v, std::memory_order_relaxed);
  return v;
}

// A device older than the oldest architecture this library was built for
// would fail every launch with "no kernel image": say so up front, with the
// build to use instead (docs/gpu.md, "Architectures").
std::string arch_problem() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return "no current CUDA device";
  const int arch = device_arch(dev);
  if (arch > 0 && arch < ATTNOPT_CUDA_MIN_ARCH)
    return "the GPU is sm_" + std::to_string(arch) + " but this libattnopt_ort.so was built (CUDA " ATTNOPT_CUDA_VERSION
           ") for sm_" + std::to_string(ATTNOPT_CUDA_MIN_ARCH) + " and newer; build it with CUDA 12 for sm_70 (docs/gpu.md)";
  return "";
}

// The CUDA message behind ATTNOPT_ERR_CUDA: the one the launch returned
// (cuda/last_error.h: the launchers clear CUDA's record), else a sticky
// error of a faulted context, which CUDA keeps.
std::string cuda_detail() {
  std::string text = attnopt::cuda::last_error_text();
  if (text.empty()) {
    const cudaError_t e = cudaPeekAtLastError();
    if (e != cudaSuccess) text = cudaGetErrorString(e);
  }
  return text.empty() ? "" : " (" + text + ")";
}
#else
std::string arch_problem() { return ""; }
std::string cuda_detail() { return ""; }
#endif

std::string dtype_name(attnopt_dtype t) { return t == ATTNOPT_F32 ? "float" : t == ATTNOPT_F16 ? "float16" : "bfloat16"; }

OrtStatusPtr fail(const Kernel& k, const char* op, OrtErrorCode code, const std::string& what) {
  const std::string node = k.node.empty() ? "" : " node '" + k.node + "'";
  return api()->CreateStatus(code, ("attnopt: " + std::string(op) + node + " on CUDAExecutionProvider: " + what).c_str());
}

OrtStatusPtr stream_of(const Kernel& k, const char* op, OrtKernelContext* ctx, void** stream) {
  *stream = nullptr;
  if (OrtStatusPtr st = api()->KernelContext_GetGPUComputeStream(ctx, stream)) {
    const std::string msg = api()->GetErrorMessage(st);
    api()->ReleaseStatus(st);
    return fail(k, op, ORT_FAIL, "no GPU compute stream: " + msg);
  }
  return nullptr;
}

OrtStatusPtr result(const Kernel& k, const char* op, int rc, const std::string& shape) {
  if (rc == ATTNOPT_OK) return nullptr;
  std::string why = attnopt_status_string(rc);
  if (rc == ATTNOPT_ERR_CUDA) {
    const std::string arch = arch_problem();
    why += arch.empty() ? cuda_detail() : ": " + arch;
  }
  return fail(k, op, rc == ATTNOPT_ERR_INVALID_ARGUMENT ? ORT_INVALID_ARGUMENT : ORT_FAIL, why + " for " + shape);
}

// The shared part as an error message states the call.
std::string describe(const attnopt_qkv& s) {
  return dtype_name(s.dtype) + " B " + std::to_string(s.batch) + ", heads " + std::to_string(s.heads_q) + "/" +
         std::to_string(s.heads_kv) + ", Nq " + std::to_string(s.len_q) + ", Nk " + std::to_string(s.len_k) +
         ", Dqk " + std::to_string(s.dim_qk) + ", Dv " + std::to_string(s.dim_v);
}

}  // namespace

OrtStatusPtr cuda_flash(const Kernel& k, OrtKernelContext* ctx, const attnopt_flash_params_v2& p) {
  void* stream = nullptr;
  if (OrtStatusPtr st = stream_of(k, "FlashAttention", ctx, &stream)) return st;
  const int rc = attnopt_cuda_flash_attention_fwd_v2(&p, stream);
  if (rc == ATTNOPT_OK) return nullptr;
  return result(k, "FlashAttention", rc, describe(p.qkv));
}

OrtStatusPtr cuda_window(const Kernel& k, OrtKernelContext* ctx, const attnopt_window_params_v2& p) {
  void* stream = nullptr;
  if (OrtStatusPtr st = stream_of(k, "WindowAttention", ctx, &stream)) return st;
  const int rc = attnopt_cuda_window_attention_fwd_v2(&p, stream);
  if (rc == ATTNOPT_OK) return nullptr;
  return result(k, "WindowAttention", rc, describe(p.qkv));
}

}  // namespace attnopt_ort
