// The CUDA error behind a launch function's ATTNOPT_ERR_CUDA. The launchers
// end with cudaGetLastError(), which returns the error and clears CUDA's
// record of it, so the ORT glue (kernels/src/ort/cuda_ops.cpp) could no
// longer read it with cudaPeekAtLastError and said only "CUDA error".
#pragma once

namespace attnopt {
namespace cuda {

// The message of the error that made this thread's last call of
// attnopt_cuda_flash_attention_fwd / attnopt_cuda_window_attention_fwd
// return ATTNOPT_ERR_CUDA; "" when that call returned anything else.
const char* last_error_text();

}  // namespace cuda
}  // namespace attnopt
