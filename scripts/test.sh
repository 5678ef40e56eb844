#!/usr/bin/env bash
# The project's test command (.ci/run calls it). Every suite runs, also
# after one failed: the kernels (CPU library, ONNX Runtime custom-op
# library and the CUDA sources' compile for sm_75…sm_90, kernels/ci.sh),
# go vet, the Go tests (the custom-op library's cases in real ONNX
# Runtime), bounded fuzzing, the ONNX Runtime backend against the newest
# onnxruntime-node (scripts/test-ort-compat.sh) and the Python package in
# fresh venvs (scripts/test-python.sh). The end lists each suite's result
# and time, the tests that were skipped and why, and exits 1 when any
# suite failed. Tests that read the shared corpus (../shared/corpus, or
# $ATTNOPT_CORPUS) skip, saying so, in a clone that does not have it.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# Development mode (eval/ort/find.go): the Go tests, run from package
# folders, find this checkout's kernels/build and .cache/ort by walking up;
# attnopt never searches the working directory otherwise.
export ATTNOPT_DEV=1
stamp() { date +%s; }
t_all=$(stamp)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=()
results=()

# suite NAME CMD...: runs CMD, records its result and time.
suite() {
  local name=$1 t0 st
  shift
  t0=$(stamp)
  echo
  echo "==== $name"
  if "$@"; then st=ok; else st=FAILED; failed+=("$name"); fi
  results+=("$(printf '%-34s %-7s %5ss' "$name" "$st" "$(( $(stamp) - t0 ))")")
  echo "==== $name: $st ($(( $(stamp) - t0 ))s)"
}

corpus="${ATTNOPT_CORPUS:-$(cd .. && pwd)/shared/corpus}"
if [[ -d "$corpus" ]]; then
  echo "corpus: $corpus (the corpus tests run)"
else
  echo "corpus: $corpus not present (the tests that read it skip; set ATTNOPT_CORPUS to run them)"
fi

setup_ort() {
  local lib
  lib="$(bash scripts/setup-ort.sh)" || return 1
  export ONNXRUNTIME_LIB="$lib"
  echo "ONNXRUNTIME_LIB=$lib"
}
go_tests() {
  go test -count=1 -json ./... 2>&1 | go run ./internal/testsummary -o "$tmp/go-summary.txt"
}
# Fuzz the loader and load → rewrite → save → reload for a bounded time,
# seeded with every hostile class of internal/hostile (the crashers found so
# far); a failing input is written under graph/testdata/fuzz/ (about 3 min).
fuzz() { go test -run '^$' -fuzz "^$1\$" -fuzztime 60s ./graph; }

suite "ONNX Runtime 1.24.3 (npm)" setup_ort
suite "kernels (kernels/ci.sh)" bash kernels/ci.sh --skip-sanitize
suite "go vet" go vet ./...
suite "go test" go_tests
suite "fuzz FuzzLoad" fuzz FuzzLoad
suite "fuzz FuzzRewrite" fuzz FuzzRewrite
suite "ONNX Runtime compatibility" bash scripts/test-ort-compat.sh
suite "Python package" bash scripts/test-python.sh
# Last, so its build cannot hold back the other suites: ASan + UBSan over
# the hostile tables and a bounded fuzz run (kernels/ci.sh).
suite "kernels: sanitizers and fuzzing" bash kernels/ci.sh --only-sanitize

echo
echo "==== summary ($(( $(stamp) - t_all ))s)"
printf '%s\n' "${results[@]}"
if [[ -f "$tmp/go-summary.txt" ]]; then
  cat "$tmp/go-summary.txt"
fi
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "PASS"
