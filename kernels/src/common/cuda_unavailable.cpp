// CUDA entry points of a build without CUDA: callers get a clear status
// instead of a missing symbol, so one binary works with or without a GPU build.
#include "attnopt/attnopt.h"

extern "C" {

int attnopt_cuda_flash_attention_fwd(const attnopt_flash_params*, void*) { return ATTNOPT_ERR_NO_CUDA; }
int attnopt_cuda_window_attention_fwd(const attnopt_window_params*, void*) { return ATTNOPT_ERR_NO_CUDA; }
int attnopt_cuda_flash_attention_fwd_v2(const attnopt_flash_params_v2*, void*) { return ATTNOPT_ERR_NO_CUDA; }
int attnopt_cuda_window_attention_fwd_v2(const attnopt_window_params_v2*, void*) { return ATTNOPT_ERR_NO_CUDA; }
int attnopt_has_cuda(void) { return 0; }

}  // extern "C"
