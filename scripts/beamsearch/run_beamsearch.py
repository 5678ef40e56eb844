"""Runs ONNX Runtime's BeamSearch on each model given (the first is the
reference) with attnopt's custom-op library registered, and says whether
every other model gives the same sequences.

usage: run_beamsearch.py CUSTOM_OP_LIB MODEL...
"""
import sys

import numpy as np
import onnxruntime as ort

lib, paths = sys.argv[1], sys.argv[2:]
feeds = {'input_ids': np.array([[5, 7, 9, 11], [3, 4, 8, 2]], np.int32), 'max_length': np.array([12], np.int32),
         'min_length': np.array([1], np.int32), 'num_beams': np.array([3], np.int32), 'num_return_sequences': np.array([2], np.int32),
         'length_penalty': np.array([1.0], np.float32), 'repetition_penalty': np.array([1.0], np.float32)}
res = []
for p in paths:
    so = ort.SessionOptions(); so.register_custom_ops_library(lib)
    s = ort.InferenceSession(p, so, providers=['CPUExecutionProvider'])
    names = [i.name for i in s.get_inputs()]
    outs = s.run(None, {k: v for k, v in feeds.items() if k in names})
    res.append(outs)
    print(p, [o.shape for o in outs], outs[0].reshape(-1)[:24])
ok = True
for p, o in zip(paths[1:], res[1:]):
    same = all(np.array_equal(a, b) for a, b in zip(res[0], o))
    print(f"{p}: {'same sequences as' if same else 'DIFFERENT sequences from'} {paths[0]}")
    ok = ok and same
sys.exit(0 if ok else 1)
