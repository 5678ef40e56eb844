"""Seed fixture CPA3D (docs/design.md §1): channels-last 3D cross-attention.

Two inputs x1, x2 of shape (1, D, H, W, C), C = 128, 4 heads of dim 32,
tokens made with einops.rearrange, ``bmm(q, kᵀ)·scale → softmax → bmm(·, v)``.
Exported at an 8×8×8 grid (512 tokens)."""

import torch
import torch.nn as nn
from einops import rearrange

from common import Family, export_case, seed


class CPA3D(nn.Module):
    """Cross-attention between two channels-last 3D feature maps."""

    def __init__(self, dim=128, heads=4, dim_head=32):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.dim_head = dim_head
        self.scale = dim_head ** -0.5
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_kv = nn.Linear(dim, inner * 2, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x1, x2):
        b, d, h, w, c = x1.shape
        q = self.to_q(self.norm1(x1))
        k, v = self.to_kv(self.norm2(x2)).chunk(2, dim=-1)
        q, k, v = (rearrange(t, "b d h w (nh hd) -> (b nh) (d h w) hd", nh=self.heads) for t in (q, k, v))
        attn = torch.bmm(q, k.transpose(-1, -2)) * self.scale
        attn = attn.softmax(dim=-1)
        out = torch.bmm(attn, v)
        out = rearrange(out, "(b nh) (d h w) hd -> b d h w (nh hd)", b=b, d=d, h=h, w=w)
        return self.to_out(out) + x1


def make(name, exporter, opset, dtype=torch.float32, grid=(8, 8, 8), dynamic=False):
    seed(0)
    model = CPA3D()
    x1 = torch.randn(1, *grid, 128)
    x2 = torch.randn(1, *grid, 128)
    notes = "rank-3 bmm with heads folded into the batch (batch 4 = 1 x 4 heads); scale multiplies the scores"
    tol = 1e-4
    if dtype == torch.float16:
        model = model.half()
        x1, x2 = x1.half(), x2.half()
        tol = 2e-2
        notes += "; fp16 model (model.half()); reference outputs computed by PyTorch in fp16 on the CPU"
    n = grid[0] * grid[1] * grid[2]
    dyn = {}
    if dynamic:
        axes = {1: "D", 2: "H", 3: "W"}
        dyn["dynamic_axes"] = {"x1": axes, "x2": axes, "y": axes}
        notes += ("; dynamic D, H, W axes (TorchScript dynamic_axes): the einops reshapes get their targets from "
                  "Shape -> Gather -> Unsqueeze -> Concat chains at run time")
    return export_case(
        name=name, model=model, inputs=(x1, x2), input_names=["x1", "x2"], output_names=["y"],
        source="seed:CPA3D", exporter=exporter, opset=opset, tol=tol, notes=notes, expected_count=1,
        attention={"module": "", "heads": 4, "q_len": n, "kv_len": n, "head_dim": 32, "v_head_dim": 32,
                   "mask": "none", "grid": list(grid), "token_order": "channels_last"}, **dyn,
    )


if __name__ == "__main__":
    fam = Family("cpa3d")
    fam.case("cpa3d", make, "torchscript", 17)
    fam.case("cpa3d_fp16", make, "torchscript", 17, dtype=torch.float16)
    fam.case("cpa3d_dynamic", make, "torchscript", 17, grid=(4, 8, 8), dynamic=True)
    fam.case("cpa3d_dynamo_op23", make, "dynamo", 23)
    fam.case("cpa3d_fp16_dynamo", make, "dynamo", 18, dtype=torch.float16)
    fam.finish()
