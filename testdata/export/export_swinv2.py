"""torchvision Swin V2 fixtures (tiny config, random weights): cosine window
attention whose scores are multiplied by a per-head logit scale
exp(clamp(logit_scale)) of shape (H, 1, 1), plus the continuous relative
position bias and, in shifted blocks, the shifted-window mask. TorchScript
(opset 17), dynamo (default opset) and dynamo opset 23."""

import torch
from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2

from common import Family, default_attention_info, export_case, seed


def make_swinv2(name, exporter, opset):
    seed(0)
    model = SwinTransformer(patch_size=[2, 2], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                            stochastic_depth_prob=0.0, num_classes=10, block=SwinTransformerBlockV2,
                            downsample_layer=PatchMergingV2)
    x = torch.randn(1, 3, 32, 32)
    heads = {0: 2, 1: 2, 2: 4, 3: 4}

    def attention(records):
        return [default_attention_info(r, {"head_dim": 8, "mask": "additive"}) for r in records]

    return export_case(
        name=name, model=model, inputs=(x,), input_names=["pixel_values"], output_names=["logits"],
        source="torchvision.models.swin_transformer.SwinTransformer(block=SwinTransformerBlockV2)",
        exporter=exporter, opset=opset, expected_count=4, attention=attention,
        notes=("Swin V2, patch 2, embed 16, depths (2, 2), heads (2, 4) of 8, window 4x4 (16 tokens), 32x32 image: "
               "16x16 then 8x8 tokens; cosine attention: normalize(q) @ normalize(k)^T times exp(clamp(logit_scale)) "
               "of shape (H, 1, 1), plus 16*sigmoid(cpb_mlp) relative position bias; the second block of each stage "
               "is shifted (mask added in a (B/nW, nW, H, N, N) view; stage 2's 8x8 grid has 4 windows)"),
    )


if __name__ == "__main__":
    fam = Family("swinv2")
    fam.case("tv_swinv2", make_swinv2, "torchscript", 17)
    fam.case("tv_swinv2_dynamo", make_swinv2, "dynamo", 18)
    fam.case("tv_swinv2_dynamo_op23", make_swinv2, "dynamo", 23)
    fam.finish()
