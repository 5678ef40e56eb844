// Compiles src/cuda/wgmma_gemm.cu against the CPU emulation (see emu_sm90.cpp).
#include "cuda/wgmma_gemm.cu"
