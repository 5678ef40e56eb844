"""Rewrites the generated sections of README.md (model table, failures) from
../MANIFEST.json.  regen.sh runs it last."""

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)


def main():
    with open(os.path.join(TESTDATA, "MANIFEST.json")) as f:
        m = json.load(f)
    total = sum(os.path.getsize(os.path.join(dp, fn)) for dp, _, fns in os.walk(os.path.join(TESTDATA, "models"))
                for fn in fns)
    sizes = [e["size_bytes"] for e in m["models"]]
    rows = [
        f"{len(m['models'])} models, {total / 2**20:.1f} MiB under `testdata/models` (model files "
        f"{min(sizes) / 1024:.1f} KiB to {max(sizes) / 2**20:.2f} MiB), torch {m['torch_version']}.",
        "",
        "| name | source | exporter | opset | dtype | attention | model KiB | ORT max abs err |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in m["models"]:
        rows.append(f"| {e['name']} | `{e['source']}` | {e['exporter']} | {e['opset']} | {e['dtype']} | "
                    f"{e['attention_count']} | {e['size_bytes'] / 1024:.0f} | {e['ort_max_abs_err']:.1e} |")
    fails = []
    for f in m["failures"]:
        why = f" Why: {f['why']}." if f.get("why") else ""
        fails.append(f"- `{f['name']}` ({f['family']}, {'expected' if f.get('expected') else 'UNEXPECTED'}): "
                     f"`{f['error'][:160]}`{why}")
    path = os.path.join(HERE, "README.md")
    with open(path) as f:
        text = f.read()
    for tag, body in (("models", rows), ("failures", fails)):
        text = re.sub(rf"(<!-- {tag}:[^\n]*-->\n).*?(<!-- /{tag} -->)",
                      lambda mo: mo.group(1) + "\n".join(body) + "\n" + mo.group(2), text, flags=re.S)
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
