#!/usr/bin/env bash
# Peak RSS and wall time of `attnopt rewrite` (load, rewrite 16 sites, save)
# on a generated model with 1 GiB of weights, against a bare protobuf parse
# and serialise of the same file (bench/pbroundtrip), interleaved, the order
# alternated, REPS times (default 5). Prints one line per run and the min and
# median ratios. Peaks from /usr/bin/time -v.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
reps="${REPS:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/attnopt" ./cmd/attnopt
go build -o "$tmp/pbroundtrip" ./bench/pbroundtrip
"$tmp/pbroundtrip" gen "$tmp/model.onnx"
size=$(stat -c %s "$tmp/model.onnx")
measure() { # name cmd… → "kib seconds"
  local name=$1; shift
  /usr/bin/time -v "$@" >/dev/null 2>"$tmp/time.txt" || { cat "$tmp/time.txt" >&2; return 1; }
  awk -F': ' '/Maximum resident set size/ {k=$2} /Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]} END {print k, s}' "$tmp/time.txt"
}
ours() { measure attnopt "$tmp/attnopt" rewrite "$tmp/model.onnx" -o "$tmp/out.onnx" --quiet; }
base() { measure protobuf "$tmp/pbroundtrip" roundtrip "$tmp/model.onnx" "$tmp/base.onnx"; }
echo "model: $size bytes"
: >"$tmp/runs"
for i in $(seq 1 "$reps"); do
  if (( i % 2 )); then read -r ok ot < <(ours); read -r bk bt < <(base)
  else read -r bk bt < <(base); read -r ok ot < <(ours); fi
  echo "run $i: attnopt ${ok} KiB ${ot}s, protobuf ${bk} KiB ${bt}s"
  awk -v ok="$ok" -v bk="$bk" -v ot="$ot" -v bt="$bt" -v sz="$size" \
    'BEGIN {printf "%.3f %.3f %.3f\n", ok*1024/sz, bk*1024/sz, ot/bt}' >>"$tmp/runs"
done
summary() { # column label
  sort -n -k"$1" "$tmp/runs" | awk -v c="$1" -v l="$2" '{v[NR]=$c} END {printf "%s: min %s, median %s\n", l, v[1], v[int((NR+1)/2)]}'
}
summary 1 "attnopt peak RSS / model size"
summary 2 "protobuf peak RSS / model size"
summary 3 "attnopt time / protobuf time"
