// Compiles src/cuda/flash_simt.cu against the CPU emulation (see emu_runtime.cpp).
#include "cuda/flash_simt.cu"
