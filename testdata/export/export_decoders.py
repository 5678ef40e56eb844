"""Decoder and encoder-decoder fixtures for causal masks and grouped-query
attention (tiny configs, random weights): a transformers Llama with 4 query
heads over 2 key/value heads and a right-padded attention_mask, SDPA with
is_causal=True, and nn.Transformer (cross-attention and a causal decoder).
Each as TorchScript (opset 17), dynamo (default opset) and dynamo opset 23."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import (BartConfig, BartModel, LlamaConfig, LlamaModel, MistralConfig, MistralModel, T5Config,
                          T5Model, WhisperConfig, WhisperModel)

from common import Family, default_attention_info, export_case, seed


class LlamaWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


def make_llama(name, exporter, opset, impl="sdpa", dynamic=False, arch="llama"):
    seed(0)
    kw = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=64, use_cache=False)
    model = LlamaModel(LlamaConfig(**kw)) if arch == "llama" else MistralModel(MistralConfig(sliding_window=4, **kw))
    model.set_attn_implementation(impl)
    ids = torch.randint(0, 64, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, 8:] = 0  # second sequence right-padded after 8 tokens
    dyn = {}
    if dynamic:
        dyn["dynamic_axes"] = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                               "last_hidden_state": {0: "batch", 1: "sequence"}}
    return export_case(
        name=name, model=LlamaWrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"], **dyn,
        output_names=["last_hidden_state"], source=f"transformers {type(model).__name__}",
        exporter=exporter, opset=opset, name_root=model, expected_count=2,
        notes=(f"{type(model).__name__}" + (", sliding_window 4 (band mask: key j within i-3..i)"
                                            if arch == "mistral" else "") + ", 2 layers, hidden 32, 4 query heads over 2 key/value heads (GQA, repeat_kv), head dim 8, "
               f"RMSNorm, rotary embeddings; batch 2, seq 12, attention_mask int64 with the second row right-padded "
               f"after 8 tokens (no query row is fully masked); attn_implementation={impl!r}: causal + padding mask"
               + ("; dynamic batch and sequence axes (the masks and repeat_kv shapes are computed at run time)"
                  if dynamic else "")),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 2,
                                                           **({"mask": "causal"} if arch == "llama" else
                                                              {"mask": "sliding_window", "window": 4})})
                                for r in recs],
    )


class CausalSDPA(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def make_sdpa_causal(name, exporter, opset):
    seed(0)
    q, k, v = (torch.randn(1, 4, 32, 8) for _ in range(3))
    return export_case(
        name=name, model=CausalSDPA(), inputs=(q, k, v), input_names=["q", "k", "v"], output_names=["out"],
        source="torch.nn.functional.scaled_dot_product_attention(is_causal=True)", exporter=exporter, opset=opset,
        expected_count=1, notes="SDPA with is_causal=True, 4 heads of 8, 32 tokens",
    )


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=32,
                                dropout=0.0, batch_first=True)

    def forward(self, src, tgt):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return self.t(src, tgt, tgt_mask=mask, tgt_is_causal=True)


def make_seq2seq(name, exporter, opset):
    seed(0)
    src, tgt = torch.randn(2, 10, 16), torch.randn(2, 6, 16)
    return export_case(
        name=name, model=Seq2Seq(), inputs=(src, tgt), input_names=["src", "tgt"], output_names=["out"],
        source="torch.nn.Transformer", exporter=exporter, opset=opset, expected_count=3, ref_grad=True,
        notes=("nn.Transformer, d_model 16, 2 heads, 1 encoder + 1 decoder layer, batch_first; source 10 tokens, "
               "target 6 with generate_square_subsequent_mask (triu of -inf): encoder self-attention, causal "
               "decoder self-attention, cross-attention (6 queries over 10 keys)"),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8}) for r in recs],
    )


class Seq2SeqWrapper(nn.Module):
    """Encoder-decoder: returns the decoder's last hidden state."""

    def __init__(self, model, enc_key):
        super().__init__()
        self.model = model
        self.enc_key = enc_key

    def forward(self, enc_in, decoder_input_ids):
        return self.model(**{self.enc_key: enc_in}, decoder_input_ids=decoder_input_ids,
                          use_cache=False).last_hidden_state


def make_hf_seq2seq(name, exporter, opset, arch):
    seed(0)
    if arch == "bart":
        model = BartModel(BartConfig(vocab_size=64, d_model=32, encoder_layers=1, decoder_layers=1,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, max_position_embeddings=64))
        enc_in, key, n_enc = torch.randint(3, 64, (2, 10)), "input_ids", 10
    elif arch == "t5":
        model = T5Model(T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1,
                                 num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=16))
        enc_in, key, n_enc = torch.randint(3, 64, (2, 10)), "input_ids", 10
    else:
        model = WhisperModel(WhisperConfig(vocab_size=64, num_mel_bins=8, d_model=32, encoder_layers=1,
                                           decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
                                           encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=8,
                                           max_target_positions=16, pad_token_id=1, bos_token_id=2,
                                           eos_token_id=2, decoder_start_token_id=2))
        enc_in, key, n_enc = torch.randn(2, 8, 16), "input_features", 8
    dec = torch.randint(3, 64, (2, 6))
    return export_case(
        name=name, model=Seq2SeqWrapper(model, key), inputs=(enc_in, dec), input_names=[key, "decoder_input_ids"],
        output_names=["last_hidden_state"], source=f"transformers {type(model).__name__}", exporter=exporter,
        opset=opset, name_root=model, expected_count=3,
        notes=(f"{type(model).__name__}, 1 encoder + 1 decoder layer, d_model 32, 4 heads of 8; encoder {n_enc} "
               f"positions, decoder 6 tokens: encoder self-attention, causal decoder self-attention, "
               f"cross-attention (6 queries over {n_enc} keys)"),
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "mask": causal_if_decoder_self(r),
                                                           **({"bias": "relative_position"} if arch == "t5" and
                                                              "EncDecAttention" not in r["module"] else {})})
                                for r in recs],
    )


def causal_if_decoder_self(rec):
    """The decoder's self-attention is causal; encoder and cross-attention are not masked here."""
    m = rec["module"] or ""
    return "causal" if "decoder" in m and ("self_attn" in m or "SelfAttention" in m) else "none"


if __name__ == "__main__":
    fam = Family("decoders")
    for suffix, exporter, opset in [("", "torchscript", 17), ("_dynamo", "dynamo", 18), ("_dynamo_op23", "dynamo", 23)]:
        fam.case("hf_llama_gqa" + suffix, make_llama, exporter, opset)
        fam.case("sdpa_causal" + suffix, make_sdpa_causal, exporter, opset)
        fam.case("nn_transformer" + suffix, make_seq2seq, exporter, opset)
    fam.case("hf_llama_gqa_dynamic", make_llama, "torchscript", 17, dynamic=True)
    fam.case("hf_mistral_window", make_llama, "torchscript", 17, arch="mistral")
    for suffix, opset in [("_dynamo", 18), ("_dynamo_op23", 23)]:
        fam.expected_failure("hf_mistral_window" + suffix, "dynamo export disagrees with PyTorch (ORT max abs error "
                             "0.65 on the fixture inputs): the sliding-window mask is exported wrongly",
                             make_llama, "dynamo", opset, arch="mistral")
    for arch in ("bart", "t5", "whisper"):
        for suffix, exporter, opset in [("", "torchscript", 17), ("_dynamo", "dynamo", 18),
                                        ("_dynamo_op23", "dynamo", 23)]:
            if arch == "whisper" and exporter == "torchscript":
                fam.expected_failure("hf_whisper", "TorchScript exporter: without a decoder attention mask, "
                                     "transformers 5 looks for packed sequences with torch.diff, which has no ONNX "
                                     "symbolic (as hf_gpt2_nomask)", make_hf_seq2seq, exporter, opset, arch)
                continue
            fam.case(f"hf_{arch}" + suffix, make_hf_seq2seq, exporter, opset, arch)
    fam.finish()
