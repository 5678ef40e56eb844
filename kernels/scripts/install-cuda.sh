#!/usr/bin/env bash
# Installs CUDA 13.0's compiler (nvcc, cicc, ptxas, headers, the static
# runtime) from NVIDIA's PyPI wheels into a folder of its own and prints that
# toolkit's root (add ROOT/bin to PATH). About 150 MB from PyPI, pip's cache
# reused on later runs: a few seconds then, against tens of minutes for
# Debian's 2 GB nvidia-cuda-toolkit on a busy CI machine. 13.0 is the version
# on the project's GPU machine (kernels/README.md, GPU results); CUDA 13
# compiles sm_75 and newer (Volta, sm_70, needs CUDA 12 or older:
# scripts/install-cuda12.sh).
# Usage: ROOT=$(bash kernels/scripts/install-cuda.sh [DIR])   (no root needed)
set -euo pipefail
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/attnopt/cuda-13.0.88}"
root="$dir/nvidia/cu13"
if [[ ! -x "$root/bin/nvcc" || ! -f "$root/lib/libcudart_static.a" ]]; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir" \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
fi
# nvcc.profile links from lib64 and CMake's FindCUDAToolkit looks for an
# unversioned libcudart.so; the wheels install lib/ and libcudart.so.13.
[[ -e "$root/lib64" ]] || ln -s lib "$root/lib64"
[[ -e "$root/lib/libcudart.so" ]] || ln -s libcudart.so.13 "$root/lib/libcudart.so"
"$root/bin/nvcc" --version | tail -1 >&2
echo "$root"
