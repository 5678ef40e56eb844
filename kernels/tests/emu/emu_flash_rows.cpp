// Compiles src/cuda/flash_rows.cu against the CPU emulation (see emu_runtime.cpp).
#include "cuda/flash_rows.cu"
