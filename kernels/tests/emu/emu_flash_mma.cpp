// Compiles src/cuda/flash_mma.cu against the CPU emulation (see emu_runtime.cpp).
#include "cuda/flash_mma.cu"
