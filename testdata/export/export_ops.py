"""Single-op models for opset-23 ops the Go runtime implements
(RMSNormalization, RotaryEmbedding), with outputs from ONNX's reference
implementation (onnx.reference) on seeded random inputs:
testdata/ops/<case>/model.onnx and test_data_set_0/, in the layout of
testdata/models. eval's TestOpCases runs them."""

import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops")


def save_case(d, model, feeds, outputs):
    """Writes d/model.onnx and d/test_data_set_0/ (inputs and outputs as
    TensorProto files in order), replacing d."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, tensors in (("input", feeds), ("output", outputs)):
        for i, (n, a) in enumerate(tensors.items()):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.ascontiguousarray(a), name=n).SerializeToString())


def case(name, op, inputs, attrs):
    rng = np.random.default_rng(0)
    feeds, infos = {}, []
    for n, shape, kind in inputs:
        if kind == "pos":
            a = rng.integers(0, 16, size=shape).astype(np.int64)
        elif kind == "angle":
            a = rng.uniform(-1, 1, size=shape).astype(np.float32)
        else:
            a = rng.standard_normal(shape).astype(np.float32)
        feeds[n] = a
        infos.append(helper.make_tensor_value_info(n, TensorProto.INT64 if kind == "pos" else TensorProto.FLOAT, shape))
    node = helper.make_node(op, [n for n, _, _ in inputs], ["y"], **attrs)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, inputs[0][1])
    model = helper.make_model(helper.make_graph([node], name, infos, [out]),
                              opset_imports=[helper.make_opsetid("", 23)], producer_name="attnopt-export_ops")
    model.ir_version = 10
    onnx.checker.check_model(model)
    (y,) = ReferenceEvaluator(model).run(None, feeds)
    save_case(os.path.join(OUT, name), model, feeds, {"y": y})
    print(name, y.shape)


if __name__ == "__main__":
    case("rms_norm_last_axis", "RMSNormalization", [("x", (2, 3, 8), "x"), ("scale", (8,), "x")], {})
    case("rms_norm_axis1", "RMSNormalization", [("x", (2, 3, 4), "x"), ("scale", (3, 4), "x")],
         {"axis": 1, "epsilon": 1e-3})
    case("rotary_4d", "RotaryEmbedding", [("x", (2, 3, 5, 8), "x"), ("cos", (2, 5, 4), "angle"),
                                          ("sin", (2, 5, 4), "angle")], {})
    case("rotary_4d_interleaved", "RotaryEmbedding", [("x", (2, 3, 5, 8), "x"), ("cos", (2, 5, 4), "angle"),
                                                      ("sin", (2, 5, 4), "angle")], {"interleaved": 1})
    case("rotary_3d_position_ids", "RotaryEmbedding", [("x", (2, 5, 24), "x"), ("cos", (16, 4), "angle"),
                                                       ("sin", (16, 4), "angle"), ("pos", (2, 5), "pos")],
         {"num_heads": 3})
    case("rotary_partial", "RotaryEmbedding", [("x", (1, 2, 3, 8), "x"), ("cos", (16, 2), "angle"),
                                               ("sin", (16, 2), "angle"), ("pos", (1, 3), "pos")],
         {"rotary_embedding_dim": 4, "interleaved": 1})
