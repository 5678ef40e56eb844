// What this libattnopt_ort.so was built with and can run here, for
// `attnopt version`, attnopt.library_info(), tests and bug reports. Exported
// beside RegisterCustomOps (exports.map); callable without ONNX Runtime
// (ctypes, dlsym). Append-only: callers dlsym each function and treat a
// missing one as an older library.
#include <string>

#include "cpu/cpu_isa.h"

#ifndef ATTNOPT_CUDA_VERSION
#define ATTNOPT_CUDA_VERSION "none"
#endif
#ifndef ATTNOPT_CUDA_ARCHS
#define ATTNOPT_CUDA_ARCHS ""
#endif

// "attnopt_ort cuda=13.0.88 archs=75-real,80-real,86-real,89-real,90" or
// "attnopt_ort cuda=none".
extern "C" __attribute__((visibility("default"))) const char* attnopt_ort_build_info(void) {
#ifdef ATTNOPT_WITH_CUDA
  return "attnopt_ort cuda=" ATTNOPT_CUDA_VERSION " archs=" ATTNOPT_CUDA_ARCHS;
#else
  return "attnopt_ort cuda=none";
#endif
}

// The CPU tile kernels: "built=generic,avx2,avx512 supported=generic,avx2
// selected=avx2" (built in, runnable on this processor, chosen for this
// process after ATTNOPT_CPU_ISA; src/cpu/cpu_isa.cpp).
extern "C" __attribute__((visibility("default"))) const char* attnopt_ort_cpu_info(void) {
  static const std::string info = [] {
    using attnopt::CpuIsa;
    std::string built, supported;
    for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
      if (!attnopt::cpu_tile_kernels_for(isa)) continue;
      const std::string name = attnopt::cpu_isa_name(isa);
      built += (built.empty() ? "" : ",") + name;
      if (attnopt::cpu_isa_supported(isa)) supported += (supported.empty() ? "" : ",") + name;
    }
    return "built=" + built + " supported=" + supported +
           " selected=" + attnopt::cpu_isa_name(attnopt::cpu_tile_kernels().isa);
  }();
  return info.c_str();
}
