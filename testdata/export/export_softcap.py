"""Softcapped attention (issue 25 item 4): a transformers Gemma2Model with a
tiny config (random weights) whose attention logit softcapping is on, in
eager attention (the form transformers computes softcapping in:
tanh(scores / c) * c after the scale, before the causal mask), exported by
TorchScript (opset 17) and dynamo (opset 18). Its layers alternate sliding
(window 4) and full attention, so the fixture holds both a softcapped
sliding-window site and a softcapped causal one. The cap, 0.5, is far below
Gemma 2's 50 so that tiny random scores are really capped (at 50 the tanh
is the identity to float precision here, which would test nothing)."""

import torch
import torch.nn as nn
from transformers import Gemma2Config, Gemma2Model

from common import Family, default_attention_info, export_case, seed


class GemmaWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


def make_gemma2(name, exporter, opset):
    seed(0)
    cfg = Gemma2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8,
                       max_position_embeddings=64, sliding_window=4, attn_logit_softcapping=0.5,
                       final_logit_softcapping=None, use_cache=False)
    model = Gemma2Model(cfg)
    model.set_attn_implementation("eager")
    # Larger query weights: scores of several units, well beyond the cap.
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.q_proj.weight.mul_(8)
    ids = torch.randint(0, 64, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, 8:] = 0  # second sequence right-padded after 8 tokens
    kinds = [{"mask": "sliding_window", "window": 4}, {"mask": "causal"}]
    return export_case(
        name=name, model=GemmaWrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers Gemma2Model", exporter=exporter, opset=opset,
        name_root=model, expected_count=2,
        notes=("Gemma2Model, 2 layers (sliding window 4, then full), hidden 32, 4 query heads over 2 key/value "
               "heads, head dim 8, attn_logit_softcapping 0.5 (q_proj weights x8 so the cap bites), eager "
               "attention: softcap(scale*QK^T) + causal/padding mask; batch 2, seq 12, attention_mask int64 with "
               "the second row right-padded after 8 tokens"),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 2, **kinds[i % 2]})
                                for i, r in enumerate(recs)],
    )


if __name__ == "__main__":
    fam = Family("softcap")
    for suffix, exporter, opset in [("", "torchscript", 17), ("_dynamo", "dynamo", 18)]:
        fam.case("hf_gemma2_softcap" + suffix, make_gemma2, exporter, opset)
    fam.finish()
