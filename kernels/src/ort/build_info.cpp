// What this libattnopt_ort.so was built with, for tests and bug reports:
// "attnopt_ort cuda=13.0.88 archs=75-real;80-real;86-real;89-real;90" or
// "attnopt_ort cuda=none". Exported beside RegisterCustomOps (exports.map);
// callable without ONNX Runtime (ctypes, dlsym).
#ifndef ATTNOPT_CUDA_VERSION
#define ATTNOPT_CUDA_VERSION "none"
#endif
#ifndef ATTNOPT_CUDA_ARCHS
#define ATTNOPT_CUDA_ARCHS ""
#endif

extern "C" __attribute__((visibility("default"))) const char* attnopt_ort_build_info(void) {
#ifdef ATTNOPT_WITH_CUDA
  return "attnopt_ort cuda=" ATTNOPT_CUDA_VERSION " archs=" ATTNOPT_CUDA_ARCHS;
#else
  return "attnopt_ort cuda=none";
#endif
}
