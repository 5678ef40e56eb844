#!/usr/bin/env bash
# Process CPU time of one CPU FlashAttention call on the seed case (16
# heads, d 4, bool mask, f32, one thread; bench/seed_call.cpp) for two
# builds of libattnopt_cpu.so: a fresh process per measurement, the two
# sides interleaved and the first one alternated, ROUNDS rounds. Prints
# min and median per side and B/A of each.
# Usage: bash kernels/bench/seed_ab.sh A.so B.so [N] [ROUNDS]   (10000, 7)
set -euo pipefail
a="$1"; b="$2"; n="${3:-10000}"; rounds="${4:-7}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -std=c++17 -I"$here/../include" "$here/seed_call.cpp" -o "$tmp/seed_call" -ldl
one() { ATTNOPT_NUM_THREADS=1 "$tmp/seed_call" "$1" "$n" 1 | sed -n 's/.*cpu \([0-9.]*\) ms.*/\1/p'; }
for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then one "$a" >>"$tmp/a"; one "$b" >>"$tmp/b"; else one "$b" >>"$tmp/b"; one "$a" >>"$tmp/a"; fi
done
stats() { sort -g "$1" | awk '{v[NR] = $1} END {printf "%s %s", v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
read -r amin amed <<<"$(stats "$tmp/a")"
read -r bmin bmed <<<"$(stats "$tmp/b")"
echo "A $a: min $amin ms, median $amed ms (CPU, $rounds runs, N $n)"
echo "B $b: min $bmin ms, median $bmed ms"
awk -v a1="$amin" -v a2="$amed" -v b1="$bmin" -v b2="$bmed" 'BEGIN { printf "B/A: min %.3f, median %.3f\n", b1 / a1, b2 / a2 }'
