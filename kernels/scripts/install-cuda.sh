#!/usr/bin/env bash
# Installs Debian's nvidia-cuda-toolkit (CUDA 11.8, non-free) when nvcc is
# absent, so CI can compile the kernels without a GPU. Needs root and apt.
set -euo pipefail
if command -v nvcc >/dev/null 2>&1; then
  echo "nvcc already present: $(command -v nvcc)"; exit 0
fi
src=/etc/apt/sources.list.d/debian-nonfree.sources
if [[ ! -f "$src" ]]; then
  cat > "$src" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# --no-install-recommends skips the docs, the Nsight GUIs and the driver stack,
# which nvcc does not need to compile.
apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit
nvcc --version | tail -2
