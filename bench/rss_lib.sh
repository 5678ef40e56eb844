# Sourced by the bench/*_rss.sh scripts: cd to the repo, build attnopt and
# bench/ortrun, make $tmp, and define peak (one ortrun's peak RSS in KiB
# from /usr/bin/time -v), stats, med and lo over a file of KiB values, and
# compare_sides (interleaved rounds over several models).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${RUNS:-5}"
export ONNXRUNTIME_LIB="${ONNXRUNTIME_LIB:-$(bash scripts/setup-ort.sh)}"
go build -o attnopt ./cmd/attnopt
go build -o bench/ortrun/ortrun ./bench/ortrun
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
peak() { # model → peak KiB
  /usr/bin/time -v bench/ortrun/ortrun "$1" 2>"$tmp/time.txt" >/dev/null || { cat "$tmp/time.txt" >&2; return 1; }
  awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt"
}
stats() { sort -n "$1" | awk '{a[NR]=$1} END {printf "min %.0f MiB, median %.0f MiB", a[1]/1024, a[int((NR+1)/2)]/1024}'; }
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
lo() { sort -n "$1" | head -1; }
# compare_sides TITLE SIDE... : peak RSS of $tmp/SIDE.onnx for every side,
# RUNS rounds with the order rotated each round, then min and median per side
# and original / side (the first side is the original).
compare_sides() {
  local title="$1" i j s
  shift
  local sides=("$@") n=$#
  for s in "${sides[@]}"; do : >"$tmp/$s.kib"; done
  for i in $(seq "$runs"); do
    for j in $(seq 0 $((n - 1))); do
      s="${sides[$(((i + j) % n))]}"
      peak "$tmp/$s.onnx" >>"$tmp/$s.kib"
    done
  done
  echo "$title (ONNX Runtime CPU, $runs runs each, interleaved, order rotated)"
  for s in "${sides[@]}"; do
    awk -v a="$(lo "$tmp/${sides[0]}.kib")" -v b="$(lo "$tmp/$s.kib")" -v c="$(med "$tmp/${sides[0]}.kib")" -v d="$(med "$tmp/$s.kib")" -v s="$s" -v st="$(stats "$tmp/$s.kib")" \
      'BEGIN {printf "  %-9s %s; original / this: %.1fx of the minima, %.1fx of the medians\n", s, st, a/b, c/d}'
  done
}
