#!/usr/bin/env bash
# CI check of the Hopper path's machine code, no GPU needed: in a CUDA build
# folder (kernels/ci.sh's), the sm_90a objects of src/cuda/flash_wgmma.cu and
# wgmma_gemm.cu must hold wgmma (HGMMA) and TMA loads (UTMALDG) in their
# SASS, mbarrier waits (SYNCS), no local-memory traffic (LDL/STL: spills or
# run-time-indexed register arrays), and libattnopt.so must carry an sm_90a
# cubin. cuobjdump and the nvdisasm it runs for --dump-sass come from PyPI
# (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm, pinned: CUDA 13's compiler
# wheels ship neither, and the earliest 13.x wheels, 13.2, read 13.0's
# objects); 4.7 MB, in a cache folder of their own.
# Usage: bash kernels/scripts/check-sm90a.sh BUILD_DIR
set -euo pipefail
build="$1"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/attnopt/cuobjdump-13.2.51"
tool="$dir/nvidia/cu13/bin/cuobjdump"
if [[ ! -x "$tool" || ! -x "$dir/nvidia/cu13/bin/nvdisasm" ]]; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$dir" \
    nvidia-cuda-cuobjdump==13.2.51 nvidia-cuda-nvdisasm==13.2.51 >&2
fi
export PATH="$dir/nvidia/cu13/bin:$PATH"
status=0
for src in flash_wgmma wgmma_gemm; do
  obj="$(find "$build" -path "*attnopt_cuda_sm90a_objs.dir*" -name "$src.cu.o" | head -1)"
  if [[ -z "$obj" ]]; then
    echo "check-sm90a: no sm_90a object for $src.cu under $build (is 90 in CMAKE_CUDA_ARCHITECTURES?)" >&2
    exit 1
  fi
  sass="$("$tool" --dump-sass "$obj")"
  count() { grep -cE "$1" <<<"$sass" || true; }
  hgmma=$(count 'HGMMA\.') tma=$(count 'UTMALDG') syncs=$(count 'SYNCS\.') local=$(count '\b(LDL|STL)\b')
  maxreg=$(count 'USETMAXREG')
  arch=$(grep -oE 'arch = sm_[0-9a-z]+' <<<"$sass" | sort -u | tr '\n' ' ')
  echo "check-sm90a: $src: $arch: $hgmma HGMMA, $tma UTMALDG, $syncs SYNCS, $maxreg USETMAXREG, $local LDL/STL"
  [[ $src == flash_wgmma && $maxreg -eq 0 ]] && { echo "check-sm90a: flash_wgmma has no setmaxnreg" >&2; status=1; }
  if [[ $hgmma -eq 0 || $tma -eq 0 || $syncs -eq 0 || $local -ne 0 || "$arch" != *sm_90a* ]]; then
    echo "check-sm90a: $src.cu: expected HGMMA, UTMALDG and SYNCS in sm_90a SASS and no LDL/STL" >&2
    status=1
  fi
done
elfs="$("$tool" --list-elf "$build/libattnopt.so")"  # not piped into grep -q: SIGPIPE under pipefail
if ! grep -q 'sm_90a' <<<"$elfs"; then
  echo "check-sm90a: libattnopt.so has no sm_90a cubin" >&2
  status=1
fi
exit $status
