"""Fixtures for lifting the fused attention dynamo exports already contain
(passes/match/fused.go): at opset 23 the dynamo exporter writes SDPA as ONNX
``Attention``.

- ``gqa_dynamo_op23``: a causal block with grouped-query attention (8 query
  heads, 2 key/value heads; ``enable_gqa=True``). PyTorch 2.15 writes it as a
  rank-4 ``Attention`` whose K/V have fewer heads (it does not use the rank-3
  ``q_num_heads``/``kv_num_heads`` form, which ONNX's own backend tests cover).
- ``kv_cache_dynamo_op23``: one decode step that appends the new key/value to
  a cache (``torch.cat`` on the sequence axis, written as Concat before
  ``Attention``) and returns the new cache.
- ``cond_dynamo_op23``: ``torch.cond`` choosing full or causal attention: two
  ``Attention`` ops inside the branches of an ``If``, lifted and rewritten in
  place like the main graph's (passes/nested.go). The eager forward
  runs both branch functions, so PyTorch counts both.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Family, export_case, seed


class GQABlock(nn.Module):
    def __init__(self, hidden=64, heads=8, kv_heads=2):
        super().__init__()
        self.h, self.kvh, self.d = heads, kv_heads, hidden // heads
        self.q = nn.Linear(hidden, heads * self.d)
        self.k = nn.Linear(hidden, kv_heads * self.d)
        self.v = nn.Linear(hidden, kv_heads * self.d)
        self.o = nn.Linear(heads * self.d, hidden)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.h, self.d).transpose(1, 2)
        k = self.k(x).view(b, n, self.kvh, self.d).transpose(1, 2)
        v = self.v(x).view(b, n, self.kvh, self.d).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o(y.transpose(1, 2).reshape(b, n, -1))


class KVCacheStep(nn.Module):
    def __init__(self, hidden=64, heads=4):
        super().__init__()
        self.h, self.d = heads, hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)

    def forward(self, x, past_k, past_v):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.h, self.d).transpose(1, 2)
        k = torch.cat([past_k, self.k(x).view(b, n, self.h, self.d).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, self.v(x).view(b, n, self.h, self.d).transpose(1, 2)], dim=2)
        y = F.scaled_dot_product_attention(q, k, v)
        return y.transpose(1, 2).reshape(b, n, -1), k, v


class CondAttention(nn.Module):
    def forward(self, x, q, k, v):
        def full(q, k, v):
            return F.scaled_dot_product_attention(q, k, v)

        def causal(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        if not torch.onnx.is_in_onnx_export():
            # eager (the reference run): torch.cond outside export needs
            # torch.compile, which the attention recorder cannot trace; both
            # branches run so that both are counted
            a, b = full(q, k, v), causal(q, k, v)
            return a if x.sum() > 0 else b
        return torch.cond(x.sum() > 0, full, causal, (q, k, v))


def make_gqa(name):
    seed(0)
    return export_case(
        name=name, model=GQABlock(), inputs=(torch.randn(1, 16, 64),), input_names=["x"], output_names=["y"],
        source="lift:gqa", exporter="dynamo", opset=23, expected_count=1, attention={"mask": "causal"},
        notes="opset 23: grouped-query SDPA (8 query heads, 2 key/value heads, causal, Nq = Nk) written as ONNX "
              "Attention with rank-4 K/V of 2 heads; attnopt lifts it into a site",
    )


def make_kv(name):
    seed(0)
    ins = (torch.randn(1, 1, 64), torch.randn(1, 4, 7, 16), torch.randn(1, 4, 7, 16))
    return export_case(
        name=name, model=KVCacheStep(), inputs=ins, input_names=["x", "past_k", "past_v"],
        output_names=["y", "present_k", "present_v"], source="lift:kv_cache", exporter="dynamo", opset=23,
        expected_count=1,
        notes="opset 23: one decode step (1 new token, 7 cached); the cache append is a Concat before ONNX "
              "Attention and the concatenated K/V are graph outputs",
    )


def make_cond(name):
    seed(0)
    ins = (torch.randn(3), torch.randn(1, 4, 16, 8), torch.randn(1, 4, 16, 8), torch.randn(1, 4, 16, 8))
    return export_case(
        name=name, model=CondAttention(), inputs=ins, input_names=["x", "q", "k", "v"], output_names=["y"],
        source="lift:cond", exporter="dynamo", opset=23, expected_count=2,
        notes="opset 23: torch.cond between full and causal SDPA; an If whose two branches each hold an ONNX "
              "Attention (the eager run computes both branch functions, so PyTorch counts both)",
    )


if __name__ == "__main__":
    fam = Family("lift")
    fam.case("gqa_dynamo_op23", make_gqa)
    fam.case("kv_cache_dynamo_op23", make_kv)
    fam.case("cond_dynamo_op23", make_cond)
    fam.finish()
