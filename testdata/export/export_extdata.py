"""Fixtures with external data (issue 33: `validate` on real models): the
weights in model.onnx.data beside model.onnx, as exporters write models over
2 GiB, so that validation is tested the way such models load, from a folder
other than the model's.

- extdata_unet128: a diffusers UNet2DModel at 128x128 (AttnDownBlock2D /
  AttnUpBlock2D and the mid block at 64x64: 4 sites of 4096 tokens, 5 heads of 8, each site's scores
  320 MiB), torch's default (dynamo) exporter, the layout that made
  reduced-length validation fail.
- extdata_qwen3_past: a Qwen3 decode step with a KV cache (Optimum's
  decoder-with-past signature, export_causal.py's make_optimum), the first
  row left-padded, so the fused ops carry fill attributes."""

import torch
import torch.nn as nn
from diffusers import UNet2DModel

from common import Family, default_attention_info, export_case, seed
from export_causal import make_optimum


class UNetWrapper(nn.Module):
    def __init__(self, unet):
        super().__init__()
        self.unet = unet

    def forward(self, sample, timestep):
        return self.unet(sample, timestep, return_dict=False)[0]


def make_unet128(name, exporter, opset):
    seed(0)
    unet = UNet2DModel(
        sample_size=128, in_channels=1, out_channels=1, layers_per_block=1, block_out_channels=(8, 40),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=8, norm_num_groups=8)
    sample = torch.randn(1, 1, 128, 128)
    timestep = torch.tensor([10.0])

    def items(recs):
        mods = dict(unet.named_modules())
        out = []
        for r in recs:
            m = mods[r["module"]]
            out.append(default_attention_info(r, {"heads": m.heads, "head_dim": m.to_q.out_features // m.heads,
                                                  "v_head_dim": m.to_v.out_features // m.heads, "mask": "none",
                                                  "grid": [64, 64], "token_order": "channels_first"}))
        return out

    return export_case(
        name=name, model=UNetWrapper(unet), inputs=(sample, timestep), input_names=["sample", "timestep"],
        output_names=["out_sample"], source="diffusers.models.unets.unet_2d.UNet2DModel", exporter=exporter,
        opset=opset, name_root=unet, expected_count=4, external_data=True, tol=1e-3,
        notes="UNet2DModel 128x128, 1 channel in and out, block_out_channels (8, 40), AttnDownBlock2D, the mid block and AttnUpBlock2D (2 attentions) at 64x64: 4096 "
              "tokens, 5 heads of dim 8 (scores 320 MiB per site), the default attention processor (SDPA); "
              "weights in model.onnx.data beside model.onnx",
        attention=items,
    )


def make_qwen3_past(name, exporter, opset):
    return make_optimum("qwen3", past=8, external_data=True)(name, exporter, opset)


if __name__ == "__main__":
    fam = Family("extdata")
    fam.case("extdata_unet128", make_unet128, "dynamo", 18)
    fam.case("extdata_qwen3_past", make_qwen3_past, "torchscript", 17)
    fam.finish()
