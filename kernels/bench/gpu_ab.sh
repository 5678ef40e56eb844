#!/usr/bin/env bash
# A/B of the tensor-core kernel on a GPU machine: builds kernels/ as it is
# (B) and a copy whose src/cuda files are replaced by those in $1 (A, e.g. the
# previous commit's, carried in a folder), checks nothing (run gpu_check.sh
# for that), and times both with ab_bench.py (interleaved, order alternated).
# Usage: bash kernels/bench/gpu_ab.sh OLD_CUDA_SRC_DIR
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernels="$(cd "$here/.." && pwd)"
old="$(cd "$1" && pwd)"
arch="${CUDA_ARCH:-90}"
rm -rf /tmp/attnopt_a && cp -r "$kernels" /tmp/attnopt_a && rm -rf /tmp/attnopt_a/build
cp "$old"/* /tmp/attnopt_a/src/cuda/
for d in /tmp/attnopt_a:/tmp/build_a "$kernels":/tmp/build_b; do
  src="${d%%:*}" bld="${d##*:}"
  cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release -DATTNOPT_CUDA=ON -DATTNOPT_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null && cmake --build "$bld" -j "$(nproc)" --target attnopt_shared >/dev/null || exit 1
done
python3 "$here/ab_bench.py" --a /tmp/build_a/libattnopt.so --b /tmp/build_b/libattnopt.so --rounds "${ROUNDS:-5}"
