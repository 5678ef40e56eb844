"""testdata/examples/mistral_window256_s4096.onnx: a 2-layer transformers
MistralModel (hidden 32, 4 query heads over 2 key/value heads, head dim 8)
with sliding_window 256, exported by TorchScript at opset 17 with the
sequence fixed at 4096 (batch 1), for bench/mistral_window_rss.sh. Needs torch
and transformers (the venv of requirements.txt plus transformers)."""
import os

import onnx
import torch
from transformers import MistralConfig, MistralModel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "examples", "mistral_window256_s4096.onnx")


class Wrapper(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


def main():
    torch.manual_seed(0)
    kw = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=8192, use_cache=False)
    model = MistralModel(MistralConfig(sliding_window=256, **kw)).eval()
    model.set_attn_implementation("sdpa")
    ids = torch.randint(0, 64, (1, 512))
    mask = torch.ones(1, 512, dtype=torch.int64)
    # Exported with a symbolic sequence (traced at 512), then fixed at 4096.
    torch.onnx.export(Wrapper(model), (ids, mask), OUT, input_names=["input_ids", "attention_mask"],
                      output_names=["out"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}, "out": {1: "seq"}})
    m = onnx.load(OUT)
    for v in list(m.graph.input) + list(m.graph.output):
        for d in v.type.tensor_type.shape.dim:
            if d.dim_param == "seq":
                d.ClearField("dim_param")
                d.dim_value = 4096
    onnx.save(m, OUT)


if __name__ == "__main__":
    main()
