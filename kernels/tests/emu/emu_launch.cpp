// Compiles src/cuda/launch.cu against the CPU emulation (see emu_runtime.cpp).
#include "cuda/launch.cu"
