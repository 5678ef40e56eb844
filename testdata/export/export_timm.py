"""timm fixtures: a tiny VisionTransformer and a tiny SwinTransformer (window
attention with relative position bias and the shifted-window mask)."""

import torch

from timm.models.swin_transformer import SwinTransformer
from timm.models.vision_transformer import VisionTransformer

from common import Family, default_attention_info, export_case, seed


def set_fused(model, fused):
    for m in model.modules():
        if hasattr(m, "fused_attn"):
            m.fused_attn = fused
    return model


def vit(fused):
    return set_fused(VisionTransformer(img_size=32, patch_size=8, in_chans=3, num_classes=10, embed_dim=64, depth=2,
                                       num_heads=4, mlp_ratio=2.0), fused)


def swin(fused):
    return set_fused(SwinTransformer(img_size=32, patch_size=2, in_chans=3, num_classes=10, embed_dim=32,
                                     depths=(2, 2), num_heads=(2, 4), window_size=4, mlp_ratio=2.0), fused)


def attn_info(model, extra):
    mods = dict(model.named_modules())

    def fn(records):
        items = []
        for r in records:
            m = mods[r["module"]]
            spec = {"head_dim": m.head_dim if hasattr(m, "head_dim") else m.qkv.out_features // 3 // m.num_heads}
            spec.update(extra(m, r))
            items.append(default_attention_info(r, spec))
        return items

    return fn


def make_vit(name, exporter, opset, fused=False, dtype=torch.float32):
    seed(0)
    model = vit(fused)
    x = torch.randn(1, 3, 32, 32)
    tol = 1e-4
    notes = ("tokens = 1 class token + 4x4 patches (conv patch embedding, flatten(2).transpose(1, 2)), so no grid; "
             + ("fused_attn=True: F.scaled_dot_product_attention (exported as its decomposition)" if fused else
                "fused_attn=False: q * scale, q @ k^T, softmax, @ v"))
    if dtype == torch.float16:
        model, x, tol = model.half(), x.half(), 2e-2
        notes += "; fp16 model, reference computed by PyTorch in fp16 on the CPU"
    return export_case(
        name=name, model=model, inputs=(x,), input_names=["pixel_values"], output_names=["logits"],
        source="timm.models.vision_transformer.VisionTransformer", exporter=exporter, opset=opset, tol=tol,
        notes=notes, expected_count=2,
        attention=attn_info(model, lambda m, r: {"grid": None, "token_order": None}),
    )


def make_swin(name, exporter, opset, fused=False):
    seed(0)
    model = swin(fused)
    x = torch.randn(1, 3, 32, 32)

    def extra(m, r):
        return {"mask": "additive", "grid": list(m.window_size), "token_order": "channels_last"}

    return export_case(
        name=name, model=model, inputs=(x,), input_names=["pixel_values"], output_names=["logits"],
        source="timm.models.swin_transformer.SwinTransformer", exporter=exporter, opset=opset,
        notes=("window attention, 4x4 windows (16 tokens) over a 16x16 then 8x8 token grid (NHWC); windows folded "
               "into the batch; additive relative position bias in every block, plus the shifted-window mask "
               "(-100 fill, added through a rank-5 view (B, nW, heads, N, N)) in the odd blocks; "
               "grid below is the window, token order channels-last; "
               + ("fused_attn=True: SDPA with a float attn_mask" if fused else "fused_attn=False: q * scale, q @ k^T")),
        expected_count=4, attention=attn_info(model, extra),
    )


if __name__ == "__main__":
    fam = Family("timm")
    fam.case("timm_vit", make_vit, "torchscript", 17)
    fam.case("timm_vit_sdpa", make_vit, "torchscript", 17, fused=True)
    fam.case("timm_vit_fp16", make_vit, "torchscript", 17, dtype=torch.float16)
    fam.case("timm_vit_dynamo", make_vit, "dynamo", 18)
    fam.case("timm_vit_sdpa_dynamo_op23", make_vit, "dynamo", 23, fused=True)
    fam.case("timm_swin", make_swin, "torchscript", 17)
    fam.case("timm_swin_dynamo", make_swin, "dynamo", 18)
    fam.finish()
