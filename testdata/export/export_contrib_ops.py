"""Single-op models of the ONNX Runtime contrib ops (com.microsoft, and
SimplifiedLayerNormalization, which ONNX Runtime registers in the default
domain) that its transformers optimizer writes around attention, with
outputs from ONNX Runtime's CPU kernels on seeded random inputs:
testdata/ops/ms_<case>/ in the layout of testdata/models (export_ops.py's
save_case). eval's TestOpCases runs them; graph's contrib shape rules are
held to the same outputs' shapes. Run with any Python that has onnx and
onnxruntime (the export venv: 1.32; CI's C library is 1.24.3, whose kernels
agree on these cases)."""

import os

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

from export_ops import OUT, save_case

MS = "com.microsoft"


def run(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def case(name, op, inputs, outputs, attrs=None, domain=MS):
    """inputs: (name, shape, kind) with kind float, int32, int64, pos
    (int64 positions < 16), ids (int32 < 20), seg (int32 0/1), mask (int32,
    the last row keeping 3 tokens) or "" for an omitted input; outputs: names,
    "" for omitted ones."""
    rng = np.random.default_rng(0)
    feeds, infos, names = {}, [], []
    for n, shape, kind in inputs:
        names.append(n)
        if n == "":
            continue
        if kind == "float":
            a = rng.standard_normal(shape).astype(np.float32)
        elif kind == "pos":
            a = rng.integers(0, 16, size=shape).astype(np.int64)
        elif kind == "ids":
            a = rng.integers(0, 20, size=shape).astype(np.int32)
        elif kind == "seg":
            a = rng.integers(0, 2, size=shape).astype(np.int32)
        elif kind == "mask":
            a = np.ones(shape, np.int32)
            a[-1, 3:] = 0
        else:
            raise ValueError(kind)
        feeds[n] = a
        et = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}[a.dtype.type]
        infos.append(helper.make_tensor_value_info(n, et, shape))
    node = helper.make_node(op, names, outputs, domain=domain, **(attrs or {}))
    outs = [o for o in outputs if o]
    # shapes left out: ONNX Runtime's own inference fills them
    graph = helper.make_graph([node], name, infos, [helper.make_empty_tensor_value_info(o) for o in outs])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(MS, 1)] if domain == MS else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="attnopt-export_contrib_ops")
    model.ir_version = 8
    got = run(model, feeds)
    # declare the output types ONNX Runtime computed, so the files load typed
    del model.graph.output[:]
    for o in outs:
        a = got[o]
        et = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}[a.dtype.type]
        model.graph.output.append(helper.make_tensor_value_info(o, et, list(a.shape)))
    save_case(os.path.join(OUT, "ms_" + name), model, feeds, {o: got[o] for o in outs})
    print(name, {o: got[o].shape for o in outs})


if __name__ == "__main__":
    x, h = (2, 3, 8), (8,)
    case("skip_layer_norm", "SkipLayerNormalization",
         [("x", x, "float"), ("skip", x, "float"), ("gamma", h, "float"), ("beta", h, "float"), ("bias", h, "float")],
         ["y", "", "", "sum"], {"epsilon": 1e-5})
    case("skip_simplified_layer_norm", "SkipSimplifiedLayerNormalization",
         [("x", x, "float"), ("skip", x, "float"), ("gamma", h, "float"), ("bias", h, "float")],
         ["y", "", "", "sum"])
    case("simplified_layer_norm", "SimplifiedLayerNormalization", [("x", x, "float"), ("scale", h, "float")],
         ["y", "inv_std_var"], {"axis": -1, "epsilon": 1e-5}, domain="")
    case("bias_gelu", "BiasGelu", [("x", x, "float"), ("bias", h, "float")], ["y"])
    case("fast_gelu_bias", "FastGelu", [("x", x, "float"), ("bias", h, "float")], ["y"])
    case("fast_gelu", "FastGelu", [("x", x, "float")], ["y"])
    case("gelu", "Gelu", [("x", x, "float")], ["y"])
    case("quick_gelu", "QuickGelu", [("x", x, "float")], ["y"], {"alpha": 1.5})
    case("rotary_3d_position_ids", "RotaryEmbedding",
         [("x", (2, 5, 24), "float"), ("pos", (2, 5), "pos"), ("cos", (16, 4), "float"), ("sin", (16, 4), "float")],
         ["y"], {"num_heads": 3})
    case("rotary_3d_heads_from_cache", "RotaryEmbedding",
         [("x", (2, 5, 24), "float"), ("pos", (2, 5), "pos"), ("cos", (16, 4), "float"), ("sin", (16, 4), "float")],
         ["y"])
    case("rotary_4d_offset_interleaved", "RotaryEmbedding",
         [("x", (1, 2, 5, 8), "float"), ("pos", (1,), "pos"), ("cos", (16, 4), "float"), ("sin", (16, 4), "float")],
         ["y"], {"interleaved": 1})
    case("embed_layer_norm", "EmbedLayerNormalization",
         [("ids", (2, 5), "ids"), ("seg", (2, 5), "seg"), ("word", (20, 8), "float"), ("pos_emb", (16, 8), "float"),
          ("seg_emb", (2, 8), "float"), ("gamma", h, "float"), ("beta", h, "float"), ("mask", (2, 5), "mask")],
         ["y", "mask_index", "sum"], {"epsilon": 1e-5})
    case("embed_layer_norm_no_segment", "EmbedLayerNormalization",
         [("ids", (2, 5), "ids"), ("", None, None), ("word", (20, 8), "float"), ("pos_emb", (16, 8), "float"),
          ("", None, None), ("gamma", h, "float"), ("beta", h, "float")],
         ["y", "mask_index"])
