"""Dynamic-shape GPT-2 exports (issue 25 part 1: pinning a real input shape
must never lose a site): transformers GPT2Model with dynamic batch and
sequence through dynamo's dynamic_shapes, through dynamo with the legacy
dynamic_axes argument (which torch converts, and whose value_info then spells
dims as products such as batch*sequence), and through TorchScript with
dynamic_axes on the sequence only (the graph declares batch 1)."""

import torch
import torch.nn as nn
from transformers import GPT2Config, GPT2Model

from common import Family, default_attention_info, export_case, seed


class TextWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


def make_gpt2(name, exporter, how, batch=2):
    seed(0)
    model = GPT2Model(GPT2Config(vocab_size=100, n_positions=64, n_embd=64, n_layer=2, n_head=4, use_cache=False))
    model.set_attn_implementation("eager")
    ids = torch.randint(0, 100, (batch, 16))
    mask = torch.ones(batch, 16, dtype=torch.int64)
    names = ("input_ids", "attention_mask", "last_hidden_state")
    dyn = {}
    if how == "dynamic_shapes":
        b, s = torch.export.Dim("batch", max=64), torch.export.Dim("sequence", max=64)
        dyn["dynamic_shapes"] = {"input_ids": {0: b, 1: s}, "attention_mask": {0: b, 1: s}}
    elif how == "dynamic_axes":
        dyn["dynamic_axes"] = {n: {0: "batch", 1: "sequence"} for n in names}
    else:  # sequence only
        dyn["dynamic_axes"] = {n: {1: "sequence"} for n in names}
    return export_case(
        name=name, model=TextWrapper(model), inputs=(ids, mask), input_names=list(names[:2]),
        output_names=["last_hidden_state"], source="transformers.models.gpt2.modeling_gpt2.GPT2Model",
        exporter=exporter, opset=18 if exporter == "dynamo" else 17, name_root=model, expected_count=2, **dyn,
        notes=(f"GPT2Model, 2 layers, n_embd 64, 4 heads of 16, eager, all-ones attention_mask (see hf_gpt2); "
               f"batch {batch}, seq 16; {exporter} with {how.replace('_', ' ')}"
               + ("" if how != "sequence_axis" else " {1: sequence} (batch declared 1)") + "; causal"),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 16, "mask": "causal"}) for r in recs],
    )


if __name__ == "__main__":
    fam = Family("dynamic")
    fam.case("hf_gpt2_dynamic_dynamo", make_gpt2, "dynamo", "dynamic_shapes")
    fam.case("hf_gpt2_dynamic_axes_dynamo", make_gpt2, "dynamo", "dynamic_axes")
    fam.case("hf_gpt2_dynamic_axes", make_gpt2, "torchscript", "dynamic_axes")
    fam.case("hf_gpt2_seq_axis", make_gpt2, "torchscript", "sequence_axis", batch=1)
    fam.finish()
