"""The seed SDPA block (docs/design.md §1, case 3) at its real size, exported with
the dynamo exporter at opset 23: q, k, v (1, 16, 10000, 4) fp16 and a bool
mask (1, 1, 10000, 10000), written as one ONNX ``Attention`` op.  Only the
export runs (the eager forward would materialise 6.7 GB); the file has no
weights.  Writes ``testdata/examples/seed_sdpa_mask_h16d4_dynamo_op23.onnx``,
which bench/sdpa_op23_rss.sh runs in ONNX Runtime before and after rewriting.
"""

import os

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import TESTDATA, strip_node_metadata


class SDPA(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


if __name__ == "__main__":
    n, h, d = 10000, 16, 4
    q = torch.zeros(1, h, n, d, dtype=torch.float16)
    mask = torch.ones(1, 1, n, n, dtype=torch.bool)
    path = os.path.join(TESTDATA, "examples", "seed_sdpa_mask_h16d4_dynamo_op23.onnx")
    with torch.no_grad():
        prog = torch.onnx.export(SDPA(), (q, q.clone(), q.clone(), mask), dynamo=True, opset_version=23,
                                 input_names=["q", "k", "v", "mask"], output_names=["out"], external_data=False,
                                 report=False, verify=False)
    prog.save(path, external_data=False)
    proto = onnx.load(path)
    strip_node_metadata(proto)
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    print(path, os.path.getsize(path), "bytes")
