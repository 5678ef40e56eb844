"""Grouped-query and multi-query attention in the forms issue 25 part 3
found lost: a transformers Llama (4 query heads over 2 key/value heads) in
fp16 through the TorchScript exporter, whose SDPA decomposition casts V to
float32 after repeat_kv; a Falcon-type multi-query module (one key/value
head expanded to every query head, k.expand(B, H, N, D)) through TorchScript
and dynamo; transformers' FalconModel with multi_query (one key/value head
that the product broadcasts) through both."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import FalconConfig, FalconModel, LlamaConfig, LlamaModel

from common import Family, default_attention_info, export_case, seed


class TextWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


def text_inputs():
    ids = torch.randint(0, 64, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, 8:] = 0  # the second row right-padded after 8 tokens
    return ids, mask


def make_llama_fp16(name):
    seed(0)
    model = LlamaModel(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   use_cache=False))
    model.set_attn_implementation("sdpa")
    model = model.half()
    return export_case(
        name=name, model=TextWrapper(model), inputs=text_inputs(), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers LlamaModel", exporter="torchscript", opset=17,
        name_root=model, expected_count=2, tol=2e-2,
        notes=("LlamaModel in float16, 2 layers, hidden 32, 4 query heads over 2 key/value heads (repeat_kv), head "
               "dim 8; SDPA, whose TorchScript decomposition of an fp16 call computes the scores and P·V in "
               "float32: V is cast to float32 after the head repeat; batch 2, seq 12, the second row padded after "
               "8 tokens; causal + padding"),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 2, "mask": "causal"})
                                for r in recs],
    )


class MultiQuery(nn.Module):
    """Falcon-type multi-query attention: one key/value head of size d/h,
    expanded to the h query heads; causal."""

    def __init__(self, d=32, h=4):
        super().__init__()
        self.h, self.hd = h, d // h
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * self.hd)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, self.h, self.hd).transpose(1, 2)
        k, v = self.kv(x).split(self.hd, -1)
        k = k.unsqueeze(1).expand(b, self.h, n, self.hd)
        v = v.unsqueeze(1).expand(b, self.h, n, self.hd)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, n, -1))


def make_mqa(name, exporter, opset):
    seed(0)
    return export_case(
        name=name, model=MultiQuery(), inputs=(torch.randn(2, 10, 32),), input_names=["x"], output_names=["y"],
        source="seed:MultiQuery", exporter=exporter, opset=opset, expected_count=1,
        notes=("Falcon-type multi-query attention: 4 query heads of 8, one key/value head from a (32, 16) "
               "projection, k.unsqueeze(1).expand(B, 4, N, 8) (and v), SDPA is_causal=True; batch 2, 10 tokens"),
        attention=lambda recs: [default_attention_info(r, {"kv_heads": 1, "mask": "causal"}) for r in recs],
    )


def make_falcon(name, exporter, opset):
    seed(0)
    model = FalconModel(FalconConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     multi_query=True, new_decoder_architecture=False, parallel_attn=True,
                                     bias=False, alibi=False, use_cache=False))
    model.set_attn_implementation("eager")
    return export_case(
        name=name, model=TextWrapper(model), inputs=text_inputs(), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers FalconModel", exporter=exporter, opset=opset,
        name_root=model, expected_count=2,
        notes=("FalconModel, multi_query (one key/value head that the score product broadcasts over the 4 query "
               "heads), 2 layers, hidden 32, head dim 8, rotary, eager; batch 2, seq 12, the second row padded "
               "after 8 tokens; causal + padding"),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 1, "mask": "causal"})
                                for r in recs],
    )


if __name__ == "__main__":
    fam = Family("kvheads")
    fam.case("hf_llama_gqa_fp16", make_llama_fp16)
    fam.case("mqa_expand", make_mqa, "torchscript", 17)
    fam.case("mqa_expand_dynamo", make_mqa, "dynamo", 18)
    fam.case("hf_falcon_mqa", make_falcon, "torchscript", 17)
    fam.case("hf_falcon_mqa_dynamo", make_falcon, "dynamo", 18)
    fam.finish()
