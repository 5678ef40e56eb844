"""Rewrites a fixture for every target with the attnopt CLI and compares each
rewrite with the original in ONNX Runtime on the fixture's own inputs and on
extra shapes (dynamic fixtures), with padded attention masks: the numbers
check behind a new pattern variant (BLOOM's head view was checked this way).

  python check_targets.py ATTNOPT_BIN CUSTOM_OPS_LIB FIXTURE_DIR [BxN ...]

The onnx target needs opset 23: the model is converted with
onnx.version_converter first (in a temporary folder). Exit 1 on a mismatch.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper, version_converter

TARGETS = ["attnopt", "ort", "onnx", "gqa"]


def session(path, custom):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if custom:
        so.register_custom_ops_library(custom)
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def feeds(fixture, shapes):
    """The fixture's inputs, then input_ids/attention_mask of each BxN with
    the last row right-padded to half its length (text models only)."""
    d = os.path.join(fixture, "test_data_set_0")
    model = onnx.load(os.path.join(fixture, "model.onnx"), load_external_data=False)
    names = [i.name for i in model.graph.input]
    out = [{n: numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"input_{k}.pb"))) for k, n in enumerate(names)}]
    rng = np.random.default_rng(0)
    for s in shapes:
        b, n = (int(x) for x in s.split("x"))
        mask = np.ones((b, n), np.int64)
        mask[-1, n // 2 + 1:] = 0
        out.append({"input_ids": rng.integers(0, 100, (b, n), dtype=np.int64), "attention_mask": mask})
    return out


def fp16_weights(path):
    return any(t.data_type == onnx.TensorProto.FLOAT16 for t in onnx.load(path).graph.initializer)


def main():
    attnopt, custom, fixture, shapes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    tmp = tempfile.mkdtemp()
    src = os.path.join(fixture, "model.onnx")
    op23 = os.path.join(tmp, "model_op23.onnx")
    onnx.save(version_converter.convert_version(onnx.load(src), 23), op23)
    bad = 0
    for target in TARGETS:
        orig = op23 if target == "onnx" else src
        out = os.path.join(tmp, f"{target}.onnx")
        r = subprocess.run([attnopt, "rewrite", "--quiet", "--verify-each", "--target", target, orig, "-o", out],
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            print(f"{target}: rewrite exit {r.returncode}: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
            continue
        want_s, got_s = session(orig, None), session(out, custom if target == "attnopt" else None)
        fused = sum(1 for n in onnx.load(out).graph.node if n.op_type in
                    ("FlashAttention", "MultiHeadAttention", "Attention", "GroupQueryAttention"))
        for f in feeds(fixture, shapes):
            want, got = want_s.run(None, f), got_s.run(None, f)
            err = max(float(np.max(np.abs(a - b))) for a, b in zip(want, got))
            shape = "x".join(str(x) for x in next(iter(f.values())).shape)
            # an fp16 model carries fp16 error (validate's tolerances)
            tol = 2e-2 if any(a.dtype == np.float16 for a in f.values()) or fp16_weights(orig) else 1e-4
            ok = err <= tol and all(np.isfinite(g).all() for g in got)
            bad += not ok
            print(f"{target}: {fused} fused op(s), input {shape}: max abs err {err:.3g} {'ok' if ok else 'MISMATCH'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
