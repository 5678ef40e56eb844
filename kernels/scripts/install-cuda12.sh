#!/usr/bin/env bash
# Installs a CUDA 12.4 compiler into a folder of its own and prints that
# toolkit's root (add ROOT/bin to PATH), for the sm_70 (V100) build that
# CUDA 13 no longer offers (scripts/install-cuda.sh is the CUDA 13 one).
#
# Why not PyPI's cu12 wheels alone: every nvidia-cuda-nvcc-cu12 release
# (12.0.76 ... 12.9.86) ships ptxas, libnvvm and libdevice only, for JIT
# users; nvcc, cicc, cudafe++, fatbinary and nvlink are not in them. So:
#  - the compiler drivers come from Debian's non-free nvidia-cuda-toolkit
#    12.4.131 (trixie; NVIDIA's own prebuilt binaries, which need glibc 2.34
#    and run on bookworm), fetched with `apt-get download` through a private
#    sources list and unpacked with `dpkg -x` (nothing is installed
#    system-wide, no root needed beyond what apt-get download wants);
#  - headers and crt/ come from PyPI's cu12 wheels of the same release
#    (nvidia-cuda-runtime-cu12 12.4.127, nvidia-cuda-nvcc-cu12 12.4.131,
#    nvidia-cuda-cccl-cu12 12.4.127.post1);
#  - the static runtime (libcudart_static.a, which PyPI's cu12 runtime wheels
#    carry in 12.9.79, not in 12.5.82 or 12.6.77) from nvidia-cuda-runtime-cu12 12.9.79: within
#    CUDA 12 a newer runtime serves code compiled by an older compiler, as a
#    newer libcudart.so.12 does; it needs a driver of CUDA 12 (>= 525).
# About 110 MB of downloads. The host compiler is the system g++ (12 on
# Debian 12; CUDA 12.4 takes GCC 6 to 13).
# Usage: ROOT=$(bash kernels/scripts/install-cuda12.sh [DIR])
set -euo pipefail
dir="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/attnopt/cuda-12.4.131}"
root="$dir/toolkit"
if [[ ! -x "$root/bin/nvcc" || ! -f "$root/lib/libcudart_static.a" || ! -x "$root/nvvm/bin/cicc" ]]; then
  rm -rf "$dir/apt" "$dir/debs" "$dir/deb-root" "$dir/wheels" "$dir/wheels-rt" "$root"
  mkdir -p "$dir/apt/lists/partial" "$dir/debs" "$root/bin" "$root/nvvm/bin" "$root/lib"
  echo "deb http://deb.debian.org/debian trixie main contrib non-free" >"$dir/apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq >&2
  (cd "$dir/debs" && apt-get "${apt_opts[@]}" download -qq nvidia-cuda-toolkit=12.4.131~12.4.1-2 >&2)
  dpkg -x "$dir"/debs/nvidia-cuda-toolkit_*.deb "$dir/deb-root"
  tk="$dir/deb-root/usr/lib/nvidia-cuda-toolkit"
  cp "$tk/bin/nvcc" "$root/bin/"
  cp "$tk/bin/cicc" "$root/nvvm/bin/"
  cp -r "$tk/bin/crt" "$root/bin/crt"
  for t in cudafe++ fatbinary nvlink ptxas bin2c cuobjdump nvdisasm; do cp "$dir/deb-root/usr/bin/$t" "$root/bin/"; done
  mkdir -p "$root/nvvm/libdevice"
  cp "$tk/libdevice/libdevice.10.bc" "$root/nvvm/libdevice/"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir/wheels" \
    nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-nvcc-cu12==12.4.131 nvidia-cuda-cccl-cu12==12.4.127.post1 >&2
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir/wheels-rt" \
    nvidia-cuda-runtime-cu12==12.9.79 >&2
  mkdir -p "$root/include"
  for p in cuda_runtime cuda_nvcc cuda_cccl; do cp -r "$dir/wheels/nvidia/$p/include/." "$root/include/"; done
  rt="$dir/wheels-rt/nvidia/cuda_runtime/lib"
  cp "$rt/libcudart_static.a" "$rt/libculibos.a" "$rt/libcudart.so.12" "$root/lib/"
  # nvlink 12.4 refuses 12.9's device runtime ("newer than toolkit"); nothing
  # here uses dynamic parallelism, but nvcc's device link (and CMake's
  # compiler check) names -lcudadevrt: an empty archive stands in for it.
  ar rc "$root/lib/libcudadevrt.a"
  # CMake's FindCUDAToolkit looks for an unversioned libcudart.so and lib64/.
  ln -s libcudart.so.12 "$root/lib/libcudart.so"
  ln -s lib "$root/lib64"
  # NVIDIA's layout, relative to this bin/ (Debian's profile points at /usr).
  cat >"$root/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
  rm -rf "$dir/deb-root" "$dir/apt/cache"
fi
"$root/bin/nvcc" --version | tail -1 >&2
echo "$root"
