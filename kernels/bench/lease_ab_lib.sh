#!/usr/bin/env bash
# Builds another libattnopt.so for the lease's A/B step (lease.sh call1,
# part_ab): the kernels/ of a git revision (the merge base before a kernel
# change, say) or of a folder, for sm_90 only, stripped, as
# .ortgpu/ab/NAME.so.xz (git ignores .ortgpu/; about 0.7-2.5 MB, so it rides
# in call 1 beside piece 0). ab_bench.py passes today's attnopt_flash_params,
# whose layout is append-only, so an older library reads its own prefix.
# Usage: bash kernels/bench/lease_ab_lib.sh REV [NAME]        (NAME: REV)
#        bash kernels/bench/lease_ab_lib.sh --src DIR NAME    (DIR holds kernels/)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ "${1:-}" == --src ]]; then
  [[ $# -eq 3 && -d "$2/kernels" ]] || { echo "usage: lease_ab_lib.sh --src DIR NAME (DIR/kernels must exist)" >&2; exit 2; }
  cp -r "$2/kernels" "$tmp/kernels" && rm -rf "$tmp/kernels/build"
  name="$3"
else
  [[ $# -ge 1 ]] || { echo "usage: lease_ab_lib.sh REV [NAME] | --src DIR NAME" >&2; exit 2; }
  git -C "$root" archive "$1" kernels | tar -x -C "$tmp"
  name="${2:-$1}"
fi
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "lease_ab_lib: NAME must be letters, digits, '.', '_' or '-'" >&2; exit 2; }
nvcc="$(bash "$root/kernels/scripts/install-cuda.sh")/bin/nvcc"
(cd "$root" && go mod download github.com/yalue/onnxruntime_go@v1.27.0)
inc="$(go env GOMODCACHE)/github.com/yalue/onnxruntime_go@v1.27.0"
cmake -S "$tmp/kernels" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON -DATTNOPT_BUILD_TESTS=OFF \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90-real -DORT_INCLUDE_DIR="$inc" >/dev/null
cmake --build "$tmp/build" -j "$(nproc)" --target attnopt_shared >/dev/null
mkdir -p "$root/.ortgpu/ab"
strip --strip-unneeded -o "$tmp/lib.so" "$tmp/build/libattnopt.so"
xz -9e -T2 -c "$tmp/lib.so" >"$root/.ortgpu/ab/$name.so.xz.tmp"
mv "$root/.ortgpu/ab/$name.so.xz.tmp" "$root/.ortgpu/ab/$name.so.xz"
echo "$root/.ortgpu/ab/$name.so.xz ($(stat -c %s "$root/.ortgpu/ab/$name.so.xz") bytes)"
