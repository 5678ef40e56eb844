#!/usr/bin/env bash
# Makes the device bundle for kernels/bench/lease.sh, here (never in
# CI): onnxruntime-gpu for the lent H200's Python 3.12, trimmed to sm_90, with
# this checkout's CUDA-enabled libattnopt_ort.so, in pieces of at most 29 MiB
# (less when the tracked tree leaves less of a call's 64 MiB)
# under .ortgpu/ (ignored by git; no binary is ever committed).
#
# Why trimmed: onnxruntime-gpu 1.31.1's libonnxruntime_providers_cuda.so is
# 284 MB, 208 MiB of it machine code for sm_75/80/86/89/90/120 (no PTX).
# fatbin_trim.py zeroes every architecture but sm_90 in place (ELF offsets
# unchanged), and sm_90's entries of op families no check launches (MoE,
# quantised GEMM, decoder attention), and xz squeezes the zeros out; the pybind module, the Python
# files and the provider bridge come along; TensorRT's provider and the
# C-API libonnxruntime.so stay behind (Python does not load them). A device
# call carries the tracked tree (about 42 MiB) and at most 64 MiB in all, so
# the pieces travel in two calls (lease.sh, its header).
# Usage: bash kernels/bench/ort_gpu_bundle.sh [ORT_VERSION]   (default 1.31.1)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
ver="${1:-1.31.1}"
dest="$root/.ortgpu"
work="$dest/work"
mkdir -p "$work/dl"
lib="${ATTNOPT_ORT_CUDA_LIB:-$root/kernels/build/cuda13/libattnopt_ort.so}"
[[ -f "$lib" ]] || { echo "no CUDA-enabled $lib: run bash kernels/ci.sh (or its CUDA 13 step) first" >&2; exit 1; }
python3 "$root/kernels/bench/fatbin_trim.py" "$lib" | grep -q "sass sm_90" || { echo "$lib has no sm_90 code" >&2; exit 1; }

whl="$(ls "$work"/dl/onnxruntime_gpu-"$ver"-cp312-*.whl 2>/dev/null | head -1 || true)"
if [[ -z "$whl" ]]; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$work/dl" "onnxruntime-gpu==$ver"
  whl="$(ls "$work"/dl/onnxruntime_gpu-"$ver"-cp312-*.whl | head -1)"
fi
echo "wheel: $(basename "$whl") ($(du -m "$whl" | cut -f1) MB)"

stage="$work/stage"
rm -rf "$stage" && mkdir -p "$stage/site" "$stage/attnopt"
(cd "$stage/site" && python3 -m zipfile -e "$whl" .)
capi="$stage/site/onnxruntime/capi"
rm -f "$capi"/libonnxruntime_providers_tensorrt.so "$capi"/libonnxruntime.so.*
# Tools `import onnxruntime` never loads (graph optimisers, quantisation).
rm -rf "$stage/site/onnxruntime/transformers" "$stage/site/onnxruntime/quantization" "$stage/site/onnxruntime/tools"
# --drop-classes: sm_90's MoE, quantised-GEMM, decoder-attention entries
# and FlashAttention-2's other head dims (about 62 of its 73 MiB), which no
# lease.sh step launches; with them the bundle needs 3 pieces, and lease.sh
# carries 2.
python3 -c 'import zstandard' 2>/dev/null || python3 -m pip install -q zstandard
python3 "$root/kernels/bench/fatbin_trim.py" "$capi/libonnxruntime_providers_cuda.so" --keep 90 --drop-classes \
  -o "$capi/libonnxruntime_providers_cuda.so.trim" | tee "$work/provider_trim.txt"
mv "$capi/libonnxruntime_providers_cuda.so.trim" "$capi/libonnxruntime_providers_cuda.so"
chmod 755 "$capi"/*.so
# The H200 loads only the sm_90 entries (byte for byte the wheel's); the
# others' zeros keep the whole in two pieces. CI loads the full library.
cp "$work/provider_trim.txt" "$stage/attnopt/fatbin.txt"
python3 "$root/kernels/bench/fatbin_trim.py" "$lib" --keep 90 -o "$stage/attnopt/libattnopt_ort.so" >>"$stage/attnopt/fatbin.txt"
# The C ABI library too (gpu_check.py, hopper_bench.py): lease.sh's call 1
# runs the tensor-core checks with it before the rest of the bundle arrives.
clib="$(dirname "$lib")/libattnopt.so"
[[ -f "$clib" ]] || { echo "no $clib beside $lib" >&2; exit 1; }
python3 "$root/kernels/bench/fatbin_trim.py" "$clib" --keep 90 -o "$stage/attnopt/libattnopt.so" >>"$stage/attnopt/fatbin.txt"
# ORT's C API header, for gpu_check.sh's build of the ORT library there.
mkdir -p "$stage/include"
(cd "$root" && go mod download github.com/yalue/onnxruntime_go@v1.27.0)
cp "$(go env GOMODCACHE)/github.com/yalue/onnxruntime_go@v1.27.0/onnxruntime_c_api.h" "$stage/include/"

# The table's models (kernels/README.md, "ORT CUDA EP"): the original and
# its --target ort and --target attnopt rewrites, made here (no Go there).
(cd "$root" && go build -o "$work/attnopt" ./cmd/attnopt)
mkdir -p "$stage/models"
printf '# name\tvariants\tnote (ort_gpu_table.py table)\n' >"$stage/models/models.txt"
while IFS='|' read -r name src note; do
  vars=orig
  cp "$root/$src" "$stage/models/$name.orig.onnx"
  for t in ort attnopt; do
    if "$work/attnopt" rewrite "$root/$src" -o "$stage/models/$name.$t.onnx" --target "$t" >"$stage/models/$name.$t.txt" 2>&1; then
      vars="$vars,$t"
    else
      echo "$name: --target $t refused: $(tail -1 "$stage/models/$name.$t.txt")"
    fi
  done
  printf '%s\t%s\t%s\n' "$name" "$vars" "$note" >>"$stage/models/models.txt"
done <<'MODELS'
seed_ts|testdata/examples/seed_sdpa_mask_h16d4.onnx|seed SDPA 16 x d 4, bool mask, N 10000, fp16, TorchScript export
seed_op23|testdata/examples/seed_sdpa_mask_h16d4_dynamo_op23.onnx|seed SDPA, dynamo opset-23 export (ONNX Attention)
sagan256|testdata/examples/seed_sagan_256.onnx|SAGAN 256x256, N 65536, fp32
cpa3d|testdata/examples/seed_cpa3d_128.onnx|CPA3D, 2097152 tokens, fp32
mistral4096|testdata/examples/mistral_window256_s4096.onnx|Mistral-type decoder layer, N 4096, window 256, fp32
MODELS

echo "onnxruntime-gpu $ver (trimmed to sm_90), $(basename "$lib") built as: $(python3 -c 'import ctypes,sys
f=ctypes.CDLL(sys.argv[1]).attnopt_ort_build_info; f.restype=ctypes.c_char_p; print(f().decode())' "$lib")" \
  >"$stage/BUNDLE.txt"

# One xz stream, cut into pieces; the lease script checks each piece's hash
# and the whole stream's before it unpacks.
rm -f "$dest"/bundle.part* "$dest"/bundle.sha256
# attnopt/libattnopt.so first: piece 0 alone decodes to it (lease.sh call1).
tar -C "$stage" -cf - attnopt/libattnopt.so attnopt/libattnopt_ort.so attnopt/fatbin.txt BUNDLE.txt include models site | xz -9e -T2 >"$work/bundle.tar.xz"
# As few pieces as a call allows, of equal size: each call carries one, and
# the tracked tree (which grows with the fixtures) travels with it, 64 MiB
# in all; 1 MiB is left spare.
size=$(stat -c %s "$work/bundle.tar.xz")
# The tree as a call counts it: as a tar stream (512-byte headers and
# padding per file, about 1.9 MiB over the files' 42.6 MiB at 2273 files);
# the files' sizes alone made 2 pieces the device tool refused.
tree=$(cd "$root" && git ls-files -z | tar --null -cf - -T - 2>/dev/null | wc -c)
max=$(( 63 * 1048576 - tree ))
if [ "$max" -gt $((29 * 1048576)) ]; then max=$((29 * 1048576)); fi
if [ "$max" -lt $((8 * 1048576)) ]; then
  echo "ort_gpu_bundle: the tracked tree is $((tree / 1048576)) MiB; a device call has no room for a piece" >&2
  exit 1
fi
# The project keeps its files at or under 44 MiB (46 MiB as a tar stream).
files=$(cd "$root" && git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
if [ "$files" -gt $((44 * 1048576)) ]; then
  echo "ort_gpu_bundle: the tracked files are $((files / 1024)) KiB, over 44 MiB: no room for a piece" >&2
  exit 1
fi
n=$(( (size + max - 1) / max ))
# lease.sh carries piece 0 in call 1 and piece 1 in call 2, nothing more
# (ORT_GPU_BUNDLE_MAX_PIECES=3 allows the older three-call scripts more).
max_pieces="${ORT_GPU_BUNDLE_MAX_PIECES:-2}"
if [ "$n" -gt "$max_pieces" ]; then
  echo "ort_gpu_bundle: $((size / 1048576)) MiB needs $n pieces of at most $((max / 1048576)) MiB; lease.sh takes $max_pieces (ORT_GPU_BUNDLE_MAX_PIECES)" >&2
  exit 1
fi
split -b $(( (size + n - 1) / n )) -d -a 1 "$work/bundle.tar.xz" "$dest/bundle.part"
(cd "$dest" && sha256sum bundle.part* >bundle.sha256 && echo "$(sha256sum <"$work/bundle.tar.xz" | cut -d' ' -f1)  bundle.tar.xz" >>bundle.sha256)
rm -rf "$stage"
ls -l "$dest"/bundle.part* | awk '{printf "%s %.1f MiB\n", $NF, $5 / 1048576}'
echo "total $(du -m "$work/bundle.tar.xz" | cut -f1) MB; hashes in $dest/bundle.sha256"
