#!/usr/bin/env bash
# Error and memory of the approximations (docs/design.md §5) on the seed CPA3D
# and SAGAN blocks: the small fixtures (8×8×8, 16×16) and the real sizes
# (128×128×128, 256×256; validated on a reduced grid of 8192 cells, the same
# for every setting). Max abs error against exact attention on seeded N(0,1)
# inputs at the site, in the Go runtime.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
go build -o attnopt ./cmd/attnopt
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| model | setting | max abs error | mean abs error | op memory after (scores before) | measured on |"
echo "|---|---|---|---|---|---|"
for m in testdata/models/cpa3d/model.onnx testdata/models/sagan/model.onnx \
         testdata/examples/seed_cpa3d_128.onnx testdata/examples/seed_sagan_256.onnx; do
  name="$(basename "$(dirname "$m")")"
  [[ "$name" == examples ]] && name="$(basename "$m" .onnx)"
  for setting in "--window 1024" "--window 16" "--window 8" "--window 4" \
                 "--pool kv --stride 2" "--pool kv --stride 4" "--pool qkv --stride 2" "--pool qkv --stride 4"; do
    # shellcheck disable=SC2086
    ./attnopt rewrite "$m" -o "$tmp/r.onnx" $setting --report "$tmp/r.json" --quiet >/dev/null
    python3 - "$tmp/r.json" "$name" "$setting" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["sites"][0]
v = s.get("validation") or {}
o = (v.get("outputs") or [{}])[0]
def human(b):
    if b is None: return "?"
    for u in ["B", "KiB", "MiB", "GiB", "TiB"]:
        if b < 1024: return f"{b} B" if u == "B" else f"{b:.1f} {u}"
        b /= 1024
    return f"{b:.1f} PiB"
where = v.get("reduced", "").split(" (")[0].replace("run at reduced length: ", "") or "full size"
setting = sys.argv[3].replace("--window 1024", "window = whole grid")
print(f"| {sys.argv[2]} | {setting} | {o.get('max_abs', float('nan')):.3g} | {o.get('mean_abs', float('nan')):.3g} | "
      f"{human(s.get('bytes_after'))} ({human(s.get('bytes_before'))}) | {where} |")
PY
  done
done
