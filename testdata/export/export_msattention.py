"""Single-op com.microsoft.Attention models (ONNX Runtime's packed-QKV
attention) with seeded random weights and inputs, and outputs from ONNX
Runtime's CPU kernel: testdata/msattention/<case>/model.onnx and
test_data_set_0/, in the layout of testdata/ops. passes' TestLiftMSAttention
rewrites each with --target attnopt and --target ort and checks the stored
outputs in the Go runtime and in ONNX Runtime.

Run with any Python that has onnx and onnxruntime 1.24.3 (the version
the tests use): python testdata/export/export_msattention.py
ONNX Runtime 1.24.3's CPU kernel crashes (SIGSEGV) on this op without the
bias input, so every case has one."""

import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from export_ops import save_case

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "msattention")
B, S, DIN, H, HD = 3, 6, 16, 2, 4


def case(name, attrs=None, mask=None, bias_shape=None, sizes=None, dtype=np.float32, dims=None, mask_dims=None,
         past=0, present=False, seq=S):
    """mask: the mask_index array; bias_shape: attention_bias dims; sizes:
    qkv_hidden_sizes; dims, mask_dims: symbolic dims for x and mask_index;
    past: the cache length P (0: no past input); present: the present
    output is a graph output (always, with a past); seq: the queries S."""
    rng = np.random.default_rng(len(name))
    sizes = sizes or [H * HD] * 3
    tp = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    w = (rng.standard_normal((DIN, sum(sizes))) / np.sqrt(DIN)).astype(dtype)
    b = (0.1 * rng.standard_normal(sum(sizes))).astype(dtype)
    x = rng.standard_normal((B, seq, DIN)).astype(dtype)
    feeds = {"x": x}
    infos = [helper.make_tensor_value_info("x", tp, dims or [B, seq, DIN])]
    ins = ["x", "w", "b"]
    if mask is not None:
        feeds["mask_index"] = mask
        infos.append(helper.make_tensor_value_info("mask_index", TensorProto.INT32, mask_dims or list(mask.shape)))
        ins.append("mask_index")
    if past:
        p = rng.standard_normal((2, B, H, past, HD)).astype(dtype)
        feeds["past"] = p
        infos.append(helper.make_tensor_value_info("past", tp, list(p.shape)))
        ins += [""] * (4 - len(ins)) + ["past"]
    if bias_shape is not None:
        ab = rng.standard_normal(bias_shape).astype(dtype)
        feeds["attention_bias"] = ab
        infos.append(helper.make_tensor_value_info("attention_bias", tp, list(bias_shape)))
        ins += [""] * (5 - len(ins)) + ["attention_bias"]
    a = dict(attrs or {})
    a["num_heads"] = H
    if sizes != [H * HD] * 3:
        a["qkv_hidden_sizes"] = sizes
    present = present or past > 0
    outs = ["y", "present"] if present else ["y"]
    node = helper.make_node("Attention", ins, outs, name="attention", domain="com.microsoft", **a)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    out = [helper.make_tensor_value_info("y", tp, [dims[0] if dims else B, dims[1] if dims else seq, sizes[2]])]
    if present:
        out.append(helper.make_tensor_value_info("present", tp, [2, B, H, past + seq, HD]))
    model = helper.make_model(helper.make_graph([node], name, infos, out, inits),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="attnopt-export_msattention")
    model.ir_version = 9
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ys = sess.run(None, feeds)
    save_case(os.path.join(OUT, name), model, feeds, dict(zip(outs, ys)))
    print(name, [v.shape for v in ys])


def bench_model(path, seq, din, heads, masked):
    """One com.microsoft.Attention at a size where the scores dominate, for
    bench/msattention_rss.sh: x (1, seq, din), head dim din / heads, and a
    raw (1, seq) mask_index when masked. Weights only; no test data."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((din, 3 * din)) / np.sqrt(din)).astype(np.float32)
    b = (0.1 * rng.standard_normal(3 * din)).astype(np.float32)
    infos = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, din])]
    ins = ["x", "w", "b"]
    if masked:
        infos.append(helper.make_tensor_value_info("mask_index", TensorProto.INT32, [1, seq]))
        ins.append("mask_index")
    node = helper.make_node("Attention", ins, ["y"], name="attention", domain="com.microsoft", num_heads=heads)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, din])
    model = helper.make_model(
        helper.make_graph([node], os.path.basename(path), infos, [out],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="attnopt-export_msattention")
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print(path)


if __name__ == "__main__":
    examples = os.path.join(os.path.dirname(OUT), "examples")
    bench_model(os.path.join(examples, "msattention_h1_s16384.onnx"), 16384, 8, 1, False)
    bench_model(os.path.join(examples, "msattention_h1_s16384_mask.onnx"), 16384, 8, 1, True)
    i32 = lambda a: np.array(a, dtype=np.int32)
    pad2d = i32([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1], [0, 1, 1, 0, 1, 0]])
    mask3d = np.random.default_rng(7).integers(0, 2, size=(B, S, S)).astype(np.int32)
    mask3d[:, :, 0] = 1
    # Rows that keep no key: ONNX Runtime adds the finite mask_filter_value
    # to all their scores, so they are plain attention. At the default
    # -10000 its own result there is off by the fp32 rounding of s - 10000
    # (up to 3e-4 here), so these cases use a small fill, which also makes
    # the dropped keys' weight visible.
    empty2d = pad2d.copy()
    empty2d[2] = 0
    empty3d = mask3d.copy()
    empty3d[1, 2, :] = 0
    small = {"mask_filter_value": -3.0}
    case("plain")
    case("unidirectional", {"unidirectional": 1})
    case("mask_2d", mask=pad2d)
    case("mask_1d_lengths", mask=i32([4, 6, 1]))
    case("mask_1d_spans", mask=i32([6, 5, 6, 2, 0, 3]))
    case("mask_3d", mask=mask3d)
    case("empty_2d", {"scale": 0.7, **small}, mask=empty2d)
    case("empty_1d_lengths", small, mask=i32([4, 6, 0]))
    case("empty_1d_spans", small, mask=i32([6, 5, 6, 2, 0, 7]))
    case("empty_3d", small, mask=empty3d)
    case("attention_bias", bias_shape=(1, H, S, S), mask=pad2d)
    case("qkv_sizes", sizes=[8, 8, 12])
    case("fp16_mask_2d", mask=pad2d, dtype=np.float16)
    case("dynamic", mask=pad2d, dims=["batch", "seq", DIN], mask_dims=["batch", "seq"])
    # A KV cache (past (2, B, H, P, D), present stacked): a prompt after a
    # cache, one decode step, masks over all P + S keys, and present read
    # without a cache.
    case("past_unidirectional", {"unidirectional": 1}, past=2)
    case("past_decode", {"unidirectional": 1}, past=5, seq=1)
    case("past_mask_2d", mask=i32([[1] * 8, [0, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0, 0, 0]]), past=2)
    case("past_mask_1d_lengths", mask=i32([8, 5, 3]), past=2)
    case("present_no_past", present=True)
    # Refused, with its reason: causal with a padding mask.
    case("refused_unidirectional_mask", {"unidirectional": 1}, mask=pad2d)
