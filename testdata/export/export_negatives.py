"""Fixtures for the matcher's negative and edge cases (not asked for by a
docs/design.md §1 case, but each is a question `inspect --explain` must answer):

* ``neg_softmax_query_axis``: scores softmaxed over the query axis (dim=-2),
  then multiplied by V.  Not attention: counts 0.
* ``neg_probs_output``: exact attention whose probabilities are also a graph
  output (the score tensor is used elsewhere).  Counts 1; a rewrite must keep
  the probabilities output or leave the site alone.
* ``vit_softmax_head``: a timm ViT followed by a softmax over the class
  logits.  3 Softmax nodes, 2 attention computations: the classifier softmax
  is not counted (filtered by module name).
* ``sagan_op11``: the SAGAN block at opset 11, where Softmax(axis) normalises
  the flattened dims from ``axis`` on (here the last axis, so still a row
  softmax).
"""

import torch
import torch.nn as nn

from common import Family, export_case, seed
from export_progan import SelfAttention2
from export_timm import vit


class SoftmaxOverQueries(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        s = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        return torch.matmul(s.softmax(dim=-2), v)


class ProbsOutput(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.scale = (dim // heads) ** -0.5

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        p = (q @ k.transpose(-2, -1) * self.scale).softmax(dim=-1)
        out = (p @ v).transpose(1, 2).reshape(b, n, c)
        return out, p


class WithSoftmaxHead(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.probs = nn.Softmax(dim=-1)

    def forward(self, x):
        return self.probs(self.body(x))


def make_query_axis(name, exporter, opset):
    seed(0)
    x = torch.randn(1, 16, 32)
    return export_case(
        name=name, model=SoftmaxOverQueries(), inputs=(x,), input_names=["x"], output_names=["y"],
        source="seed:negative.SoftmaxOverQueries", exporter=exporter, opset=opset, expected_count=0,
        notes="negative: softmax over the query axis (dim=-2) of q @ k^T, then @ v; not attention", attention=None)


def make_probs_output(name, exporter, opset):
    seed(0)
    x = torch.randn(1, 16, 32)
    return export_case(
        name=name, model=ProbsOutput(), inputs=(x,), input_names=["x"], output_names=["y", "attn_probs"],
        source="seed:negative.ProbsOutput", exporter=exporter, opset=opset, expected_count=1,
        notes=("exact attention (4 heads of 8, q @ k^T * scale, softmax, @ v) whose probabilities are also a graph "
               "output: the score tensor has another consumer"),
        attention={"heads": 4, "head_dim": 8, "mask": "none", "fusable": False,
                   "why_not_fusable": "the attention probabilities are a graph output"})


def make_vit_head(name, exporter, opset):
    seed(0)
    body = vit(False)
    model = WithSoftmaxHead(body)
    x = torch.randn(1, 3, 32, 32)
    return export_case(
        name=name, model=model, inputs=(x,), input_names=["pixel_values"], output_names=["probs"],
        source="timm.models.vision_transformer.VisionTransformer", exporter=exporter, opset=opset,
        expected_count=2, accept=lambda r: (r["module"] or "").endswith("attn"),
        notes=("timm ViT (as timm_vit) followed by nn.Softmax over the 10 class logits: 3 Softmax nodes, 2 attention "
               "computations; the classifier softmax is not counted"),
        attention={"head_dim": 16, "mask": "none"})


def make_sagan(name, exporter, opset):
    seed(0)
    model = SelfAttention2()
    with torch.no_grad():
        model.gamma.fill_(0.75)
    x = torch.randn(1, 64, 16, 16)
    return export_case(
        name=name, model=model, inputs=(x,), input_names=["x"], output_names=["y"],
        source="seed:ProGAN.SelfAttention2", exporter=exporter, opset=opset, expected_count=1,
        notes="as sagan, at opset 11 (Softmax with pre-13 semantics: axis=2 of a rank-3 tensor, the last axis)",
        attention={"module": "", "heads": 1, "head_dim": 8, "v_head_dim": 64, "q_len": 256, "kv_len": 256,
                   "mask": "none", "grid": [16, 16], "token_order": "channels_first"})


if __name__ == "__main__":
    fam = Family("negatives")
    fam.case("neg_softmax_query_axis", make_query_axis, "torchscript", 17)
    fam.case("neg_probs_output", make_probs_output, "torchscript", 17)
    fam.case("vit_softmax_head", make_vit_head, "torchscript", 17)
    fam.case("sagan_op11", make_sagan, "torchscript", 11)
    fam.finish()
