"""Fixtures with attention inside subgraphs (issue 11): attnopt rewrites
every subgraph attribute like the main graph (passes/nested.go).

- ``cond_if_dynamo``: ``torch.cond`` choosing between full and causal
  attention written as matmul → softmax → matmul, exported by the dynamo
  exporter at opset 18: an ``If`` whose two branches each hold one
  MatMul→Softmax→MatMul site. PyTorch counts both: the eager forward runs
  both branch functions and returns the one the condition picks (``torch.cond``
  itself needs ``torch.compile`` outside export).
- ``loop_script``: a block of self-attention applied ``steps`` times (an int64
  input), in a ``torch.jit.script_if_tracing`` function, exported by the
  TorchScript exporter at opset 17: a ``Loop`` whose body holds one site. The
  eager forward runs the body 3 times (3 softmax calls); the graph has the
  attention once, so the other two items are marked not fusable (one site in
  the body covers every iteration). The export trace does not see inside the
  scripted function, so only the eager forward counts.
"""

import torch
import torch.nn as nn

from common import Family, default_attention_info, export_case, seed


def attend(q, k, v, causal: bool):
    s = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
    if causal:
        n = s.shape[-1]
        keep = torch.ones(n, n, dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


class CondBlock(nn.Module):
    def forward(self, x, q, k, v):
        def full(q, k, v):
            return attend(q, k, v, False)

        def causal(q, k, v):
            return attend(q, k, v, True)

        if not torch.onnx.is_in_onnx_export():
            a, b = full(q, k, v), causal(q, k, v)
            return a if x.sum() > 0 else b
        return torch.cond(x.sum() > 0, full, causal, (q, k, v))


@torch.jit.script_if_tracing
def repeat_attention(h, steps, wq, wk, wv, wo):
    # h: (B, N, C); 2 heads of C/2
    b, n, c = h.shape[0], h.shape[1], h.shape[2]
    for _ in range(int(steps)):
        q = torch.matmul(h, wq).view(b, n, 2, c // 2).transpose(1, 2)
        k = torch.matmul(h, wk).view(b, n, 2, c // 2).transpose(1, 2)
        v = torch.matmul(h, wv).view(b, n, 2, c // 2).transpose(1, 2)
        s = torch.matmul(q, k.transpose(-2, -1)) / 4.0
        a = torch.matmul(torch.softmax(s, dim=-1), v)
        h = h + torch.matmul(a.transpose(1, 2).reshape(b, n, c), wo)
    return h


class LoopBlock(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.wq = nn.Parameter(torch.randn(c, c) * c ** -0.5)
        self.wk = nn.Parameter(torch.randn(c, c) * c ** -0.5)
        self.wv = nn.Parameter(torch.randn(c, c) * c ** -0.5)
        self.wo = nn.Parameter(torch.randn(c, c) * c ** -0.5)

    def forward(self, h, steps):
        return repeat_attention(h, steps, self.wq, self.wk, self.wv, self.wo)


def make_cond(name):
    seed(0)
    ins = (torch.randn(3), torch.randn(1, 4, 16, 8), torch.randn(1, 4, 16, 8), torch.randn(1, 4, 16, 8))

    def items(records):
        out = []
        for r, mask in zip(records, ["none", "causal"]):
            it = default_attention_info(r, {"heads": 4, "head_dim": 8, "v_head_dim": 8})
            it["mask"] = mask
            it["subgraph"] = "If/then_branch" if mask == "none" else "If/else_branch"
            out.append(it)
        return out

    return export_case(
        name=name, model=CondBlock(), inputs=ins, input_names=["x", "q", "k", "v"], output_names=["y"],
        source="nested:cond", exporter="dynamo", opset=18, expected_count=2, attention=items,
        notes="opset 18: torch.cond between full and causal attention written as matmul/softmax/matmul: an If whose "
              "branches each hold one MatMul→Softmax→MatMul site (eager runs both branch functions)",
    )


def make_loop(name):
    seed(0)
    ins = (torch.randn(1, 16, 32), torch.tensor(3, dtype=torch.int64))

    def items(records):
        out = []
        for i, r in enumerate(records):
            it = default_attention_info(r, {"heads": 2, "q_len": 16, "kv_len": 16, "head_dim": 16, "v_head_dim": 16})
            it["subgraph"] = "Loop/body"
            if i > 0:
                it["fusable"] = False
                it["why"] = f"iteration {i + 1} of the Loop runs the body's one attention again (one site)"
            out.append(it)
        return out

    return export_case(
        name=name, model=LoopBlock(), inputs=ins, input_names=["h", "steps"], output_names=["y"],
        source="nested:loop", exporter="torchscript", opset=17, expected_count=3, attention=items,
        count_in_export=False,
        notes="opset 17: torch.jit.script_if_tracing loop of a 2-head self-attention block, steps = 3: a Loop whose "
              "body holds one MatMul→Softmax→MatMul site run 3 times",
    )


if __name__ == "__main__":
    fam = Family("nested")
    fam.case("cond_if_dynamo", make_cond)
    fam.case("loop_script", make_loop)
    fam.finish()
