#!/usr/bin/env python3
"""Whole models for the end-to-end CPU table (bench/e2e.py, bench/README.md
"End to end on ONNX Runtime CPU"): the shapes people deploy, random weights
from the library's default configs, eager attention (MatMul -> Softmax ->
MatMul, what the TorchScript exporter writes for them), batch 1, opset 17.

  python bench/export_e2e.py OUT_DIR [--only NAME ...]

Needs torch and transformers (testdata/export/requirements.txt); the files
are hundreds of MB (BERT-base 420 MB) and are not committed.
"""
import argparse
import os

import torch
import torch.nn as nn


class Hidden(nn.Module):
    """A model's last_hidden_state as the one output."""

    def __init__(self, model, **fixed):
        super().__init__()
        self.model = model
        self.fixed = fixed

    def forward(self, *args):
        return self.model(*args, **self.fixed).last_hidden_state


def bert():
    """BERT-base (12 layers, 12 heads of 64), sequence 512, attention_mask all ones."""
    from transformers import BertConfig, BertModel
    m = BertModel(BertConfig(), add_pooling_layer=False)
    m.set_attn_implementation("eager")
    return Hidden(m), (torch.randint(0, 30000, (1, 512)), torch.ones(1, 512, dtype=torch.int64)), \
        ["input_ids", "attention_mask"]


def vit():
    """ViT-B/16 at 224 (12 layers, 12 heads of 64, 197 tokens)."""
    from transformers import ViTConfig, ViTModel
    m = ViTModel(ViTConfig(), add_pooling_layer=False)
    m.set_attn_implementation("eager")
    return Hidden(m), (torch.randn(1, 3, 224, 224),), ["pixel_values"]


def whisper():
    """Whisper-tiny's encoder (4 layers, 6 heads of 64, 1500 frames from 30 s of audio)."""
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    cfg = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6, encoder_ffn_dim=1536,
                        decoder_layers=4, decoder_attention_heads=6, decoder_ffn_dim=1536)
    cfg._attn_implementation = "eager"
    return Hidden(WhisperEncoder(cfg)), (torch.randn(1, 80, 3000),), ["input_features"]


class LlamaLayer(nn.Module):
    """One decoder layer on hidden states, with its rotary embedding and the causal mask built the way eager
    attention consumes it (additive, -inf above the diagonal): LlamaModel's own mask construction uses vmap,
    which the TorchScript exporter cannot trace, so the model around the layer is left out."""

    def __init__(self, cfg):
        super().__init__()
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding
        self.layer = LlamaDecoderLayer(cfg, layer_idx=0)
        self.rope = LlamaRotaryEmbedding(cfg)

    def forward(self, h):
        n = h.shape[1]
        pos = torch.arange(n).unsqueeze(0)
        mask = torch.full((n, n), float("-inf")).triu(1)[None, None]
        out = self.layer(h, attention_mask=mask, position_ids=pos, position_embeddings=self.rope(h, pos))
        return out[0] if isinstance(out, tuple) else out


def llama():
    """One Llama-type decoder layer (hidden 2048, 16 query / 4 KV heads of 128, causal), 2048 tokens, eager
    attention: MatMul -> Add(mask) -> Softmax -> MatMul with the KV heads repeated."""
    from transformers import LlamaConfig
    cfg = LlamaConfig(vocab_size=1000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=1,
                      num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=4096)
    cfg._attn_implementation = "eager"
    return LlamaLayer(cfg), (torch.randn(1, 2048, 2048),), ["hidden_states"]


MODELS = {"bert_base_s512": bert, "vit_b16_224": vit, "whisper_tiny_encoder": whisper, "llama_layer_2048": llama}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", action="append", choices=sorted(MODELS))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name in a.only or list(MODELS):
        torch.manual_seed(0)
        model, inputs, names = MODELS[name]()
        model.eval()
        path = os.path.join(a.out, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["last_hidden_state"],
                              opset_version=17, dynamo=False)
        print(path, f"{os.path.getsize(path) / 2**20:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
