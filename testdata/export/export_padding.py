"""Fixtures whose inputs have rows that see no key (issue: exact fully
masked rows; docs/fully-masked-rows.md): a transformers Qwen3 decoder with a
LEFT-padded attention_mask (the padded query rows see no key under causal +
padding), a ModernBERT encoder (local/global attention) with padding, and a
one-block SDPA whose bool mask drops every key of one query row. TorchScript
(opset 17), dynamo (default opset) and dynamo opset 23. The stored inputs
hold the fully masked rows, so the fixture tests check them."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import ModernBertConfig, ModernBertModel, Qwen3Config, Qwen3Model

from common import Family, default_attention_info, export_case, seed


class Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def left_padded(batch=2, seq=12, pad=5, vocab=64):
    ids = torch.randint(0, vocab, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, :pad] = 0  # first sequence left-padded: its first 5 query rows see no key
    return ids, mask


DYNAMO_FILL = ("the dynamo exporter writes the mask as Where(mask, 0, finfo.min), so a row that sees no key averages "
               "V over the keys the fills leave, where PyTorch's SDPA gives another value")


def make_qwen3(name, exporter, opset):
    seed(0)
    cfg = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
                      use_cache=False)
    model = Qwen3Model(cfg)
    model.set_attn_implementation("sdpa")
    ids, mask = left_padded()
    return export_case(
        name=name, model=Wrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers Qwen3Model", exporter=exporter, opset=opset,
        name_root=model, expected_count=2, onnx_differs=DYNAMO_FILL if exporter == "dynamo" and opset < 23 else "",
        notes="Qwen3Model, 2 layers, hidden 32, 4 query heads over 2 key/value heads, head dim 8, q/k RMSNorm, rotary; "
              "batch 2, seq 12, attention_mask with the first row LEFT-padded by 5 tokens: its query rows 0-4 see no "
              "key under causal + padding (the original averages V over the keys its fills leave)",
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 2, "mask": "causal"})
                                for r in recs],
    )


def make_modernbert(name, exporter, opset):
    seed(0)
    cfg = ModernBertConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                           num_attention_heads=4, max_position_embeddings=64, local_attention=4,
                           global_attn_every_n_layers=3, pad_token_id=0)
    model = ModernBertModel(cfg)
    model.set_attn_implementation("sdpa")
    ids, mask = left_padded(seq=10, pad=3)
    ids[0, :3] = 0
    return export_case(
        name=name, model=Wrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers ModernBertModel", exporter=exporter, opset=opset,
        name_root=model, expected_count=3, onnx_differs=DYNAMO_FILL if exporter == "dynamo" and opset < 23 else "",
        notes="ModernBertModel, 3 layers (global attention in layer 0, local window 4 in layers 1-2), hidden 32, "
              "4 heads; batch 2, seq 10, the first row padded over its first 3 tokens (padded query rows of the local "
              "layers see no key inside their window)",
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8}) for r in recs],
    )


class MaskedSDPA(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def make_sdpa_dead_row(name, exporter, opset):
    seed(0)
    q, k, v = (torch.randn(1, 2, 6, 4) for _ in range(3))
    mask = torch.rand(1, 1, 6, 6) < 0.7
    mask[..., 2, :] = False  # query row 2 sees no key
    mask[..., 4, 1] = True
    return export_case(
        name=name, model=MaskedSDPA(), inputs=(q, k, v, mask), input_names=["q", "k", "v", "mask"],
        output_names=["out"], source="F.scaled_dot_product_attention with a bool mask", exporter=exporter,
        opset=opset, expected_count=1,
        notes="one SDPA block, 2 heads x d 4, N 6, bool mask (1,1,6,6) whose query row 2 drops every key "
              "(PyTorch: NaN under -inf; the dynamo export fills with finfo.min: the mean of V)",
        attention=lambda recs: [default_attention_info(r, {"mask": "bool"}) for r in recs],
        onnx_differs=DYNAMO_FILL if exporter == "dynamo" and opset < 23 else "",
    )


if __name__ == "__main__":
    fam = Family("padding")
    for suffix, exporter, opset in [("", "torchscript", 17), ("_dynamo", "dynamo", 18), ("_dynamo_op23", "dynamo", 23)]:
        fam.case("hf_qwen3_leftpad" + suffix, make_qwen3, exporter, opset)
        fam.case("hf_modernbert_pad" + suffix, make_modernbert, exporter, opset)
        fam.case("sdpa_dead_row" + suffix, make_sdpa_dead_row, exporter, opset)
    fam.finish()
