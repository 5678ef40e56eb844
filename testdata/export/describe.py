"""Prints, for each Softmax (or fused Attention) in a fixture, the chain of
ops that feeds it and what consumes it: a quick look at how an exporter wrote
the attention.  Usage: python describe.py [NAME ...] (default: all fixtures)."""

import os
import sys

import onnx

from common import MODELS


def describe(path, depth=5):
    m = onnx.load(path)
    g = m.graph
    prod = {o: n for n in g.node for o in n.output}
    cons = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    inits = {i.name for i in g.initializer}
    const = {n.output[0] for n in g.node if n.op_type == "Constant"}

    def up(name, d):
        if d == 0:
            return "…"
        if name in inits or name in const:
            return "const"
        n = prod.get(name)
        if n is None:
            return f"input:{name}"
        args = [up(i, d - 1) for i in n.input if i]
        attrs = ""
        if n.op_type in ("Softmax", "Transpose"):
            attrs = str({a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
        return f"{n.op_type}{attrs}({', '.join(args)})"

    lines = []
    for n in g.node:
        if n.op_type in ("Softmax", "Attention"):
            after = [c.op_type for c in cons.get(n.output[0], [])]
            lines.append(f"  {up(n.output[0], depth)}  ->  {after}")
    return lines


if __name__ == "__main__":
    names = sys.argv[1:] or sorted(os.listdir(MODELS))
    for name in names:
        print(name)
        seen = set()
        for line in describe(os.path.join(MODELS, name, "model.onnx")):
            if line not in seen:
                print(line)
                seen.add(line)
