"""Seed fixtures from docs/design.md §1, case 3: ``F.scaled_dot_product_attention``
with a bool mask input of shape (1, 1, N, N), 16 heads of dim 4 and 8 heads of
dim 8, N = 64."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Family, export_case, rand_bool_mask, seed


class SDPA(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def make(name, exporter, opset, heads, head_dim, n=64, dtype=torch.float32):
    seed(0)
    q = torch.randn(1, heads, n, head_dim)
    k = torch.randn(1, heads, n, head_dim)
    v = torch.randn(1, heads, n, head_dim)
    mask = rand_bool_mask((1, 1, n, n))
    notes = "bool mask (true = attend), broadcast over heads; every row keeps at least one key; scale 1/sqrt(head_dim)"
    tol = 1e-4
    if dtype == torch.float16:
        q, k, v, tol = q.half(), k.half(), v.half(), 2e-2
        notes += "; fp16 inputs, reference computed by PyTorch in fp16 on the CPU (math path)"
    if exporter == "dynamo" and opset >= 23:
        notes += "; opset 23: the dynamo exporter writes SDPA as the fused ONNX Attention op (already fused)"
    return export_case(
        name=name, model=SDPA(), inputs=(q, k, v, mask), input_names=["q", "k", "v", "mask"], output_names=["out"],
        source="seed:torch.nn.functional.scaled_dot_product_attention", exporter=exporter, opset=opset, tol=tol,
        notes=notes, expected_count=1, attention=None,
    )


if __name__ == "__main__":
    fam = Family("sdpa")
    fam.case("sdpa_h16d4", make, "torchscript", 17, 16, 4)
    fam.case("sdpa_h8d8", make, "torchscript", 17, 8, 8)
    fam.case("sdpa_h16d4_fp16", make, "torchscript", 17, 16, 4, dtype=torch.float16)
    fam.case("sdpa_h16d4_dynamo", make, "dynamo", 18, 16, 4)
    fam.case("sdpa_h8d8_dynamo_op23", make, "dynamo", 23, 8, 8)
    fam.case("sdpa_h16d4_fp16_dynamo_op23", make, "dynamo", 23, 16, 4, dtype=torch.float16)
    fam.finish()
