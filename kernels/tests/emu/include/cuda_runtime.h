// CPU stand-in for the parts of cuda_runtime.h the attnopt kernels use, for
// the emulation test (tests/emu): a launch runs every block with one
// std::thread per CUDA thread, so barriers and warp collectives behave as on
// a GPU. Never used by the real CUDA build.
#ifndef ATTNOPT_EMU_CUDA_RUNTIME_H_
#define ATTNOPT_EMU_CUDA_RUNTIME_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __grid_constant__

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorInvalidValue = 1;
constexpr cudaError_t cudaErrorLaunchOutOfResources = 701;
constexpr cudaError_t cudaErrorNotSupported = 801;
typedef void* cudaStream_t;
enum cudaDeviceAttr {
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;

void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
float __shfl_xor_sync(unsigned mask, float v, int lane_mask);
int __all_sync(unsigned mask, int predicate);
int __any_sync(unsigned mask, int predicate);
unsigned __ballot_sync(unsigned mask, int predicate);

cudaError_t cudaGetDevice(int* dev);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev);
cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t err);
namespace attnopt_emu {
// The next cudaGetLastError() returns err once (a launch that failed on a
// device), so the error's way to the caller can be tested.
void fail_next_launch(cudaError_t err);
// Records a kernel's dynamic shared memory opt-in (checked by the next launch).
cudaError_t set_max_dynamic_smem(int bytes);
}  // namespace attnopt_emu

template <typename F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int value) {
  return attnopt_emu::set_max_dynamic_smem(value);
}

namespace attnopt_emu {

// The emulated device: compute capability and opt-in shared memory limit.
void set_device(int cc_major, int smem_optin);
void* dynamic_smem();
void run_grid(dim3 grid, unsigned threads, size_t smem, const std::function<void()>& body);
unsigned last_launch_threads();  // block size of the latest launch (which kernel ran)

template <typename Args>
void launch(void (*kernel)(Args), dim3 grid, unsigned threads, size_t smem, cudaStream_t, Args args) {
  run_grid(grid, threads, smem, [kernel, &args] { kernel(args); });
}

}  // namespace attnopt_emu

#endif  // ATTNOPT_EMU_CUDA_RUNTIME_H_
