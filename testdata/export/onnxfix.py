"""ONNX-only helpers shared by every fixture family.

The PyTorch families (common.py), JAX (export_jax.py), Keras (export_keras.py)
and Optimum (export_optimum.py) run in separate virtual environments, so the
pieces of a fixture that depend only on the ONNX file (op counts, opset,
declared dims, the ONNX Runtime run, the test_data_set_0 protobufs) live here,
free of any framework import, and every family computes them the same way.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import numpy_helper

# Where every family writes: testdata/models/<name>/, one file under 2 MB.
HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)
MODELS = os.path.join(TESTDATA, "models")
MAX_MODEL_BYTES = 2 * 1024 * 1024

# ops that show how attention is expressed: a manifest entry's onnx_ops keeps
# the counts of these only (a quick look, not a full op histogram)
ATTN_OPS = {"MatMul", "Einsum", "Softmax", "Where", "Attention", "Gemm", "Sqrt", "Div", "Mul", "Transpose", "Reshape",
            "Cast", "com.microsoft.Attention", "com.microsoft.MultiHeadAttention", "IsNaN", "Trilu"}


def np_dtype_name(a: np.ndarray) -> str:
    # numpy calls it "bool_" in some versions; the manifest says "bool"
    return "bool" if a.dtype == np.bool_ else str(a.dtype)


def opset_of(model: onnx.ModelProto) -> int:
    """The default-domain opset; -1 when the model imports none."""
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return -1


def onnx_op_counts(model: onnx.ModelProto) -> dict:
    """Node count per op type (``domain.op`` outside the default domain), in
    the graph, its subgraphs and the bodies of local functions."""
    counts: dict = {}

    def walk(g):
        for n in g.node:
            key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
            counts[key] = counts.get(key, 0) + 1
            for a in n.attribute:
                if a.g is not None and a.g.node:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)

    walk(model.graph)
    for f in model.functions:
        for n in f.node:
            key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
            counts[key] = counts.get(key, 0) + 1
    return counts


def graph_dims(v: onnx.ValueInfoProto) -> list:
    """Declared dims of a value: an int, a symbolic name (str), or None."""
    dims = []
    for d in v.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


def strip_node_metadata(model: onnx.ModelProto) -> None:
    """Drops per-node metadata_props and doc strings in place: the dynamo
    exporter stores a stack trace and FX names there, which can double the
    file size and are not needed."""
    def walk(g):
        for n in g.node:
            del n.metadata_props[:]
            n.doc_string = ""
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
        for v in list(g.value_info) + list(g.input) + list(g.output) + list(g.initializer):
            del v.metadata_props[:]

    walk(model.graph)
    for f in model.functions:
        for n in f.node:
            del n.metadata_props[:]


def run_ort(path: str, feeds: dict):
    """Runs the model file with ONNX Runtime (CPU, 2 intra-op threads, warnings
    off); returns (output names, outputs).  onnxruntime is imported here so that
    importing this module needs only onnx and numpy."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return names, sess.run(names, feeds)


def write_test_data(outdir: str, inputs, outputs) -> None:
    """Writes ``outdir/test_data_set_0/input_i.pb`` and ``output_i.pb`` (one
    TensorProto each, ``name`` = the graph input / output name) from
    ``inputs`` and ``outputs``, sequences of (name, array); the folder must
    exist.  Outputs go through np.ascontiguousarray and inputs do not, as the
    fixtures were first written (it turns a 0-d array into shape (1,))."""
    d = os.path.join(outdir, "test_data_set_0")
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name=n).SerializeToString())
    for i, (n, a) in enumerate(outputs):
        with open(os.path.join(d, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(a), name=n).SerializeToString())
