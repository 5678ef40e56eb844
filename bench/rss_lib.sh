# Sourced by the bench/*_rss.sh scripts: cd to the repo, build attnopt and
# bench/ortrun, make $tmp, and define peak (one ortrun's peak RSS in KiB
# from /usr/bin/time -v), stats, med and lo over a file of KiB values.
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
