// Compiles src/cuda/flash_wgmma.cu against the CPU emulation (see emu_sm90.cpp).
#include "cuda/flash_wgmma.cu"
