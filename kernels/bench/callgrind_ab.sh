#!/usr/bin/env bash
# Instruction counts of one CPU FlashAttention call on the seed case (16
# heads, d 4, bool mask, f32; bench/seed_call.cpp) for two builds of
# libattnopt_cpu.so, under valgrind --tool=callgrind on one thread: counts
# do not depend on the load of the machine, so one run per side is exact.
# Valgrind has no AVX-512: the AVX2 kernels run. Prints Ir per side, B/A.
# Usage: bash kernels/bench/callgrind_ab.sh A.so B.so [N]    (N default 10000)
set -euo pipefail
a="$1"; b="$2"; n="${3:-10000}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++17 -I"$here/../include" "$here/seed_call.cpp" -o "$tmp/seed_call" -ldl
count() {
  ATTNOPT_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/$2.out" \
    --toggle-collect=attnopt_cpu_flash_attention_fwd "$tmp/seed_call" "$1" "$n" 1 >"$tmp/$2.log" 2>&1
  grep -m1 '^summary:' "$tmp/$2.out" | awk '{print $2}'
}
ia="$(count "$a" a)"
ib="$(count "$b" b)"
echo "A $a: $ia instructions ($(grep checksum "$tmp/a.log"))"
echo "B $b: $ib instructions ($(grep checksum "$tmp/b.log"))"
awk -v a="$ia" -v b="$ib" -v n="$n" 'BEGIN { printf "B/A: %.5f (N %s)\n", b / a, n }'
