"""Models as ONNX Runtime's transformers optimizer leaves them
(onnxruntime.transformers.optimizer.optimize_model on a TorchScript export
with dynamic batch and sequence): BERT with com.microsoft.Attention (and
with MultiHeadAttention instead), EmbedLayerNormalization,
SkipLayerNormalization and BiasGelu; a ViT and a GPT-2, where ONNX Runtime
1.32 fuses SkipLayerNormalization and BiasGelu / FastGelu but not their
attention (its fusions do not match these exports of transformers 5.24), so
their attention stays Softmax chains between contrib ops. Every layer's
attention must be a site (issue 25, part 5)."""

import torch
import torch.nn as nn
from onnxruntime.transformers import optimizer
from onnxruntime.transformers.fusion_options import FusionOptions
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, ViTConfig, ViTModel

from common import Family, default_attention_info, export_case, seed


class TextWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class VisionWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).last_hidden_state


def ort_optimize(model_type, mha=False):
    def run(path):
        opts = FusionOptions(model_type)
        opts.use_multi_head_attention = mha
        opt = optimizer.optimize_model(path, model_type=model_type, num_heads=4, hidden_size=32,
                                       optimization_options=opts)
        opt.save_model_to_file(path)
    return run


def spec(mask):
    return lambda recs: [default_attention_info(r, {"head_dim": 8, "mask": mask}) for r in recs]


def make_bert(name, mha=False):
    seed(0)
    model = BertModel(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                                 intermediate_size=64, max_position_embeddings=64), add_pooling_layer=False)
    model.set_attn_implementation("eager")
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 11:] = 0  # the second row right-padded after 11 tokens
    axes = {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "last_hidden_state")}
    op = "com.microsoft.MultiHeadAttention (use_multi_head_attention)" if mha else "com.microsoft.Attention"
    return export_case(
        name=name, model=TextWrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers.models.bert.modeling_bert.BertModel",
        exporter="torchscript", opset=17, name_root=model, expected_count=3, dynamic_axes=axes,
        postprocess=ort_optimize("bert", mha),
        notes=(f"BertModel, 3 layers, hidden 32, 4 heads of 8, eager; TorchScript export with dynamic batch and "
               f"sequence, then onnxruntime.transformers.optimizer (model_type bert): EmbedLayerNormalization "
               f"(the mask index counts each row's kept tokens), {op} per layer with packed QKV weights, "
               f"SkipLayerNormalization, BiasGelu; batch 2, seq 16, the second row padded after 11 tokens"),
        attention=spec("additive"),
    )


def make_vit(name):
    seed(0)
    model = ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=64,
                               image_size=32, patch_size=8), add_pooling_layer=False)
    model.set_attn_implementation("eager")
    x = torch.randn(2, 3, 32, 32)
    return export_case(
        name=name, model=VisionWrapper(model), inputs=(x,), input_names=["pixel_values"],
        output_names=["last_hidden_state"], source="transformers.models.vit.modeling_vit.ViTModel",
        exporter="torchscript", opset=17, name_root=model, expected_count=3,
        dynamic_axes={"pixel_values": {0: "batch"}, "last_hidden_state": {0: "batch"}},
        postprocess=ort_optimize("vit"),
        notes=("ViTModel, 3 layers, hidden 32, 4 heads of 8, 32x32 image, patch 8 (17 tokens), eager; TorchScript "
               "export with a dynamic batch, then onnxruntime.transformers.optimizer (model_type vit): "
               "SkipLayerNormalization and BiasGelu are fused, the attention is not (ONNX Runtime 1.32's ViT "
               "attention fusion does not match this export): MatMul -> Softmax -> MatMul between contrib ops"),
        attention=spec("none"),
    )


def make_gpt2(name):
    seed(0)
    model = GPT2Model(GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=3, n_head=4, use_cache=False))
    model.set_attn_implementation("eager")
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    axes = {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "last_hidden_state")}
    return export_case(
        name=name, model=TextWrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers.models.gpt2.modeling_gpt2.GPT2Model",
        exporter="torchscript", opset=17, name_root=model, expected_count=3, dynamic_axes=axes,
        postprocess=ort_optimize("gpt2"),
        notes=("GPT2Model, 3 layers, n_embd 32, 4 heads of 8, eager, all-ones attention_mask (see hf_gpt2); "
               "TorchScript export with dynamic batch and sequence, then onnxruntime.transformers.optimizer "
               "(model_type gpt2): SkipLayerNormalization and FastGelu are fused, the attention is not (ONNX "
               "Runtime 1.32's GPT-2 fusion does not match this export); causal"),
        attention=spec("causal"),
    )


if __name__ == "__main__":
    fam = Family("ortopt")
    fam.case("hf_bert_ortopt", make_bert)
    fam.case("hf_bert_ortopt_mha", make_bert, mha=True)
    fam.case("hf_vit_ortopt", make_vit)
    fam.case("hf_gpt2_ortopt", make_gpt2)
    fam.finish()
