"""Writes what onnx's own shape inference infers for every fixture, for
graph/infer_onnx_test.go to hold attnopt's shape inference against (CI has
neither torch nor onnx).

  python infer_shapes.py [NAME ...]      # default: every model in MANIFEST.json

For each fixture, two runs of onnx.shape_inference.infer_shapes with
data_prop=True on the model with its value_info removed (so onnx infers every
intermediate type itself instead of echoing the exporter's):

- unpinned: the graph inputs as the file declares them;
- pinned: every graph input given the shape of its test_data_set_0 tensor
  (what `--shape NAME=DIMS` pins), and the symbols those inputs declare
  pinned in the graph outputs' declared shapes too, as attnopt pins them.

Then a runtime section: the shape ONNX Runtime gives each node output when it
runs the model on those test inputs (every value made a graph output), for the
values whose pinned line above is not that exact shape: what a pinned
inference must never contradict.

Output: testdata/golden/shapes/<name>.txt, one line per node output that onnx
gives a type (Constant outputs aside): `name TYPE [d0,d1,…]`, where a dim is a
number, a symbol the graph inputs declare, or `?` (no size, or a name onnx
invented: unk__N); `name TYPE *` when onnx knows the type but not the rank.
Values onnx gives no type (ops without a schema, such as com.microsoft ones)
are left out. Runtime lines are `name [d0,d1,…]`. Needs onnx and onnxruntime
(the export venv has both); deterministic.
"""

import json
import os
import sys

import onnx
from onnx import numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)
OUT = os.path.join(TESTDATA, "golden", "shapes")


def input_shapes(fixture_dir, model):
    """The shapes of test_data_set_0's inputs, by graph input name."""
    d = os.path.join(fixture_dir, "test_data_set_0")
    shapes = {}
    k = 0
    while os.path.exists(os.path.join(d, f"input_{k}.pb")):
        t = onnx.load_tensor(os.path.join(d, f"input_{k}.pb"))
        if t.dims:  # a scalar has nothing to pin
            shapes[t.name] = list(t.dims)
        k += 1
    return shapes


def declared_symbols(model):
    syms = set()
    for vi in model.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param"):
                syms.add(d.dim_param)
    return syms


def infer(model, pins):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    sizes = {}  # the symbols the pinned inputs declare, as --shape pins them
    for vi in m.graph.input:
        if vi.name in pins:
            tt = vi.type.tensor_type
            for d, x in zip(tt.shape.dim, pins[vi.name]):
                if d.HasField("dim_param"):
                    sizes[d.dim_param] = x
            del tt.shape.dim[:]
            for x in pins[vi.name]:
                tt.shape.dim.add().dim_value = x
    # the graph outputs' declared dims pinned too (onnx keeps what they
    # declare where it infers nothing: ops without a schema)
    for vi in m.graph.output:
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in sizes:
                d.dim_value = sizes[d.dim_param]
    return shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)


def dim_text(d, syms):
    if d.HasField("dim_value"):
        return str(d.dim_value)
    if d.HasField("dim_param") and d.dim_param in syms:
        # an expression such as Optimum's "past_sequence_length + sequence_length"
        # is written without spaces, as attnopt prints it (one token per dim)
        return d.dim_param.replace(" ", "")
    return "?"


def lines(inferred, syms):
    known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    out = []
    for n in inferred.graph.node:
        if n.op_type == "Constant":
            continue  # its type is its tensor's
        for name in n.output:
            vi = known.get(name)
            if not name or vi is None or not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            if tt.elem_type == 0:
                continue
            ty = onnx.TensorProto.DataType.Name(tt.elem_type)
            if not tt.HasField("shape"):
                out.append(f"{name} {ty} *")
                continue
            out.append(f"{name} {ty} [{','.join(dim_text(d, syms) for d in tt.shape.dim)}]")
    return out


def runtime_shapes(model, fixture_dir):
    """The shape of every node output when ONNX Runtime runs the model on
    test_data_set_0 (every value made a graph output)."""
    import numpy as np  # noqa: F401 (onnxruntime returns numpy arrays)
    import onnxruntime as ort

    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    names = []
    for n in m.graph.node:
        if n.op_type == "Constant":
            continue
        for o in n.output:
            if o and o not in have:
                m.graph.output.add().name = o
                have.add(o)
            if o:
                names.append(o)
    d = os.path.join(fixture_dir, "test_data_set_0")
    feeds = {}
    k = 0
    while os.path.exists(os.path.join(d, f"input_{k}.pb")):
        t = onnx.load_tensor(os.path.join(d, f"input_{k}.pb"))
        feeds[t.name] = numpy_helper.to_array(t)
        k += 1
    # The weights of an external-data fixture (export_extdata.py), read from
    # beside the model: ORT given bytes resolves them against the cwd.
    onnx.external_data_helper.load_external_data_for_model(m, fixture_dir)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = sess.get_outputs()
    res = sess.run([o.name for o in outs], feeds)
    got = {o.name: list(r.shape) for o, r in zip(outs, res) if hasattr(r, "shape")}
    return [(n, got[n]) for n in names if n in got]


def write(name, rel):
    fixture_dir = os.path.join(TESTDATA, os.path.dirname(rel))
    model = onnx.load(os.path.join(TESTDATA, rel), load_external_data=False)
    syms = declared_symbols(model)
    pins = input_shapes(fixture_dir, model)
    pin_text = " ".join(f"{k}={'x'.join(map(str, v))}" for k, v in pins.items())
    text = [f"# onnx {onnx.__version__} shape_inference.infer_shapes(data_prop=True), value_info removed; "
            "testdata/export/infer_shapes.py", "unpinned"]
    text += lines(infer(model, {}), syms)
    text.append(f"pinned {pin_text}")
    pinned = lines(infer(model, pins), syms)
    text += pinned
    # What ONNX Runtime computes on those inputs, where the pinned inference
    # above does not already say it exactly.
    exact = {}
    for ln in pinned:
        v, _, dims = ln.split(" ")
        if dims != "*" and "?" not in dims and not any(c.isalpha() for c in dims):
            exact[v] = dims
    text.append("runtime")
    for v, shape in runtime_shapes(model, fixture_dir):
        dims = "[" + ",".join(map(str, shape)) + "]"
        if exact.get(v) != dims:
            text.append(f"{v} {dims}")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name + ".txt"), "w") as f:
        f.write("\n".join(text) + "\n")


def main():
    man = json.load(open(os.path.join(TESTDATA, "MANIFEST.json")))
    want = set(sys.argv[1:])
    for e in man["models"]:
        if want and e["name"] not in want:
            continue
        write(e["name"], e["file"])
        print(e["name"], file=sys.stderr)


if __name__ == "__main__":
    main()
