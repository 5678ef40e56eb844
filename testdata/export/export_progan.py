"""Seed fixtures from docs/design.md §1, case 2: the two self-attention blocks of a
ProGAN/diffusion-style generator, at a 16×16 feature map with C = 64.

* ``SelfAttention``: nn.MultiheadAttention (4 heads, d = 16) between a
  LayerNorm and a feed-forward, over the H*W tokens of a (1, 64, H, W) map
  (tokens from ``view(-1, C, H*W).swapaxes(1, 2)``: channels-first order).
* ``SelfAttention2``: SAGAN.  1×1 convs give query/key with C/8 = 8 channels
  and value with C = 64; ``energy = bmm(q.permute(0, 2, 1), k)``,
  ``softmax(dim=-1)``, ``out = bmm(v, attn.permute(0, 2, 1))``; no scale;
  ``gamma * out + x``.
"""

import torch
import torch.nn as nn

from common import Family, export_case, seed


class SelfAttention(nn.Module):
    def __init__(self, channels=64, size=16, heads=4):
        super().__init__()
        self.channels = channels
        self.size = size
        self.mha = nn.MultiheadAttention(channels, heads, batch_first=True)
        self.ln = nn.LayerNorm([channels])
        self.ff_self = nn.Sequential(
            nn.LayerNorm([channels]),
            nn.Linear(channels, channels),
            nn.GELU(),
            nn.Linear(channels, channels),
        )

    def forward(self, x):
        x = x.view(-1, self.channels, self.size * self.size).swapaxes(1, 2)
        x_ln = self.ln(x)
        attention_value, _ = self.mha(x_ln, x_ln, x_ln)
        attention_value = attention_value + x
        attention_value = self.ff_self(attention_value) + attention_value
        return attention_value.swapaxes(2, 1).view(-1, self.channels, self.size, self.size)


class SelfAttention2(nn.Module):
    def __init__(self, in_dim=64):
        super().__init__()
        self.query_conv = nn.Conv2d(in_dim, in_dim // 8, kernel_size=1)
        self.key_conv = nn.Conv2d(in_dim, in_dim // 8, kernel_size=1)
        self.value_conv = nn.Conv2d(in_dim, in_dim, kernel_size=1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        b, c, h, w = x.size()
        q = self.query_conv(x).view(b, -1, h * w)  # (B, C/8, N)
        k = self.key_conv(x).view(b, -1, h * w)  # (B, C/8, N)
        energy = torch.bmm(q.permute(0, 2, 1), k)  # (B, N, N)
        attention = self.softmax(energy)
        v = self.value_conv(x).view(b, -1, h * w)  # (B, C, N)
        out = torch.bmm(v, attention.permute(0, 2, 1))  # (B, C, N)
        out = out.view(b, c, h, w)
        return self.gamma * out + x


def make_mha(name, exporter, opset, dtype=torch.float32):
    seed(0)
    model = SelfAttention()
    x = torch.randn(1, 64, 16, 16)
    notes = ("nn.MultiheadAttention with need_weights=True (the default): PyTorch's math path, "
             "q scaled by 1/sqrt(16) before bmm, heads folded into the batch (rank-3 bmm); "
             "eager reference run with autograd on so MHA does not take its native fast path")
    tol = 1e-4
    if dtype == torch.float16:
        model, x, tol = model.half(), x.half(), 2e-2
        notes += "; fp16 model, reference computed by PyTorch in fp16 on the CPU"
    return export_case(
        name=name, model=model, inputs=(x,), input_names=["x"], output_names=["y"],
        source="seed:ProGAN.SelfAttention", exporter=exporter, opset=opset, tol=tol, notes=notes,
        ref_grad=True, expected_count=1,
        attention={"module": "mha", "heads": 4, "head_dim": 16, "v_head_dim": 16, "q_len": 256, "kv_len": 256,
                   "mask": "none", "grid": [16, 16], "token_order": "channels_first"},
    )


def make_sagan(name, exporter, opset):
    seed(0)
    model = SelfAttention2()
    with torch.no_grad():
        model.gamma.fill_(0.75)  # gamma starts at 0 in training; non-zero so the output depends on attention
    x = torch.randn(1, 64, 16, 16)
    return export_case(
        name=name, model=model, inputs=(x,), input_names=["x"], output_names=["y"],
        source="seed:ProGAN.SelfAttention2", exporter=exporter, opset=opset, expected_count=1,
        notes=("SAGAN: energy = bmm(q^T, k) with no scale; out = bmm(v, attn^T) with v channels-first (C=64, N); "
               "Dqk = 8, Dv = 64; gamma set to 0.75 (it is 0 at init)"),
        attention={"module": "", "heads": 1, "head_dim": 8, "v_head_dim": 64, "q_len": 256, "kv_len": 256,
                   "mask": "none", "grid": [16, 16], "token_order": "channels_first"},
    )


if __name__ == "__main__":
    fam = Family("progan")
    fam.case("progan_mha", make_mha, "torchscript", 17)
    fam.case("progan_mha_dynamo", make_mha, "dynamo", 18)
    fam.case("sagan", make_sagan, "torchscript", 17)
    fam.case("sagan_dynamo", make_sagan, "dynamo", 18)
    fam.finish()
