"""Causal masks built the ways issue 25 found unrecognised, one fixture per
construction (TorchScript 17, dynamo 18, dynamo 23 where each exports):

- Optimum-style mask code (optimum_*): HF Optimum is not installable next to
  the pinned transformers 5.24 (optimum-onnx pins transformers 4.57), so
  `optimum_sdpa_mask` rebuilds the construction Optimum's ONNX model patcher
  registers for export (read, not copied): query and key positions as
  broadcast aranges, causal kv <= q And-ed with the padding mask gathered by
  advanced indexing `padding[batch_idx, kv_idx]`, then an Expand; the eager
  variant fills Where(mask, 0, finfo.min). GPT-2 (eager), GPT-NeoX and Qwen3
  (sdpa) with dynamic batch and sequence, left-padded inputs.
- ALiBi + causal in one additive bias (mpt_alibi*): an MPT-type block
  (llm-foundry style) that builds attn_bias = slope_h·(j − i) (or the per-key
  slope_h·(j − N + 1)), masks it causally with finfo.min and with the key
  padding mask, and adds it to the scores; and transformers' MptModel.
- fp16 dynamo exports (qwen3_fp16*), whose mask is additive.
- A Gemma 3 layer pair (gemma3*): sliding band + causal + padding in one bool
  mask, and a global layer.
- transformers GPT-2 (sdpa) with a dynamic sequence (gpt2_sdpa_dynseq*),
  legacy dynamic_axes and dynamo dynamic_shapes, left-padded.
"""

import contextlib
import math

import torch
import torch.nn as nn
from transformers import (GPT2Config, GPT2Model, GPTNeoXConfig, GPTNeoXModel, Gemma3TextConfig, Gemma3TextModel,
                          MptConfig, MptModel, Qwen3Config, Qwen3Model)
from transformers import DynamicCache
from transformers import masking_utils as mu

from common import Family, default_attention_info, export_case, seed

DYNAMO_FILL = ("the dynamo exporter writes the mask as Where(mask, 0, finfo.min), so a row that sees no key averages "
               "V over the keys the fills leave, where PyTorch's SDPA gives another value")


ROTARY_23 = ("dynamo at opset 23 with a dynamic sequence writes RotaryEmbedding with (1, S) cos/sin caches, which "
             "ONNX Runtime 1.24.3 refuses for an (B, S, …) input: the export does not run")


class Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


def left_padded(batch=2, seq=12, pad=4, vocab=64):
    ids = torch.randint(0, vocab, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, :pad] = 0  # the first row is left-padded: its first query rows see no key
    return ids, mask


# ---------------------------------------------------------------- Optimum


def optimum_sdpa_mask(batch_size, q_length, kv_length, q_offset=0, kv_offset=0, mask_function=None,
                      attention_mask=None, **kwargs):
    """The construction of Optimum's export-time sdpa mask: positions as
    broadcast aranges, the padding mask indexed by (batch, key) positions."""
    cache_position = torch.arange(q_offset, q_offset + q_length)
    q_idx = cache_position[None, None, :, None]
    b_idx = torch.arange(batch_size)[:, None, None, None]
    kv_idx = torch.arange(kv_length)[None, None, None, :] + kv_offset
    mask = kv_idx <= q_idx
    if attention_mask is not None:
        mask = mask & attention_mask.bool()[b_idx, kv_idx]
    return mask.expand(batch_size, -1, q_length, kv_length)


def optimum_eager_mask(*args, dtype=torch.float32, **kwargs):
    kwargs.pop("allow_is_causal_skip", None)
    mask = optimum_sdpa_mask(*args, **kwargs)
    return torch.where(mask, torch.tensor(0.0, dtype=dtype), torch.finfo(dtype).min)


@contextlib.contextmanager
def optimum_masks():
    m = mu.ALL_MASK_ATTENTION_FUNCTIONS._global_mapping
    saved = dict(m)
    m["sdpa"], m["eager"] = optimum_sdpa_mask, optimum_eager_mask
    try:
        yield
    finally:
        m.clear()
        m.update(saved)


OPTIMUM_AXES = {"input_ids": {0: "batch_size", 1: "sequence_length"},
                "attention_mask": {0: "batch_size", 1: "sequence_length"},
                "last_hidden_state": {0: "batch_size", 1: "sequence_length"}}


class PastWrapper(nn.Module):
    """Optimum's decoder-with-past signature: the cache arrives as one key and
    one value tensor per layer (B, Hkv, P, D)."""

    def __init__(self, model, layers):
        super().__init__()
        self.model, self.layers = model, layers

    def forward(self, input_ids, attention_mask, *past):
        cache = DynamicCache(config=self.model.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        return self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache,
                          use_cache=True).last_hidden_state


def make_optimum(kind, past=0, **case):
    """case: more export_case arguments (external_data, export_extdata.py)."""
    def make(name, exporter, opset):
        seed(0)
        if kind == "gpt2":
            model = GPT2Model(GPT2Config(vocab_size=64, n_positions=512, n_embd=32, n_layer=2, n_head=4))
            impl, heads, hd, kv = "eager", 4, 8, 4
        elif kind == "neox":
            model = GPTNeoXModel(GPTNeoXConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2,
                                               num_attention_heads=4, intermediate_size=64,
                                               max_position_embeddings=512, use_cache=False))
            impl, heads, hd, kv = "sdpa", 4, 8, 4
        else:
            model = Qwen3Model(Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                           num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                                           max_position_embeddings=512, use_cache=False))
            impl, heads, hd, kv = "sdpa", 4, 8, 2
        model.set_attn_implementation(impl)
        ids, mask = left_padded()
        wrapper, inputs, names, axes = Wrapper(model), (ids, mask), ["input_ids", "attention_mask"], dict(OPTIMUM_AXES)
        dshapes = [{0: torch.export.Dim("batch_size"), 1: torch.export.Dim("sequence_length")}] * 2
        if past:
            # a decode step of 4 new tokens after `past` cached ones
            ids, mask = ids[:, :4], torch.ones(2, past + 4, dtype=torch.int64)
            mask[0, :3] = 0  # the first row left-padded by 3 cached positions
            cache = [torch.randn(2, kv, past, hd) for _ in range(4)]
            wrapper, inputs = PastWrapper(model, 2), (ids, mask, *cache)
            for i in range(2):
                names += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
            axes["attention_mask"] = {0: "batch_size", 1: "past_sequence_length+sequence_length"}
            for n in names[2:]:
                axes[n] = {0: "batch_size", 2: "past_sequence_length"}
            b, s, p = (torch.export.Dim(x) for x in ("batch_size", "sequence_length", "past_sequence_length"))
            dshapes = [{0: b, 1: s}, {0: b, 1: torch.export.Dim.DYNAMIC}] + [{0: b, 2: p}] * 4
        dyn = {"dynamic_axes": axes} if exporter == "torchscript" else {"dynamic_shapes": tuple(dshapes)}
        with optimum_masks():
            return export_case(
                name=name, model=wrapper, inputs=inputs, input_names=names,
                output_names=["last_hidden_state"], source=f"transformers {type(model).__name__} + Optimum-style mask",
                exporter=exporter, opset=opset, name_root=model, expected_count=2,
                onnx_differs=DYNAMO_FILL if exporter == "dynamo" and opset < 23 else "", **dyn, **case,
                notes=f"{type(model).__name__}, 2 layers, hidden 32, {heads} heads of {hd} ({kv} kv heads), {impl}; "
                      "the mask built as Optimum's ONNX model patcher builds it for export (rebuilt in "
                      "export_causal.py: Optimum does not install beside transformers 5.24): aranges for query and "
                      "key positions, kv <= q And padding[batch_idx, kv_idx], Expand; dynamic batch and sequence "
                      "(Optimum's axis names); " + (f"decoder with past: {past} cached positions as inputs, 4 new tokens, the first "
                      "row's first 3 positions padded" if past else
                      "batch 2, seq 12, the first row left-padded by 4 (rows 0-3 see no key)"),
                attention=lambda recs: [default_attention_info(r, {"head_dim": hd, "kv_heads": kv, "mask": "causal"})
                                        for r in recs],
            )
    return make


# ---------------------------------------------------------------- ALiBi


def alibi_slopes(heads):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])


class AlibiBlock(nn.Module):
    """An MPT-type (llm-foundry) attention: ALiBi, causal and key padding
    folded into one additive attn_bias before it meets the scores."""

    def __init__(self, dim=32, heads=4, full=True):
        super().__init__()
        self.heads, self.hd, self.full = heads, dim // heads, full
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.register_buffer("slopes", alibi_slopes(heads).view(1, heads, 1, 1), persistent=False)

    def forward(self, x, key_padding_mask):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, self.heads, self.hd).transpose(1, 2) for t in (q, k, v))
        pos = torch.arange(n)
        if self.full:
            rel = (pos.view(1, n) - pos.view(n, 1)).abs().neg()  # -|j - i|: j - i on the kept keys
            bias = rel.view(1, 1, n, n).float() * self.slopes
        else:
            bias = (pos - (n - 1)).view(1, 1, 1, n).float() * self.slopes  # slope·(j − N + 1)
            bias = bias.expand(1, self.heads, n, n)
        fill = torch.finfo(x.dtype).min
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        bias = bias.masked_fill(~causal.view(1, 1, n, n), fill)
        bias = bias.masked_fill(~key_padding_mask.view(b, 1, 1, n), fill)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd) + bias
        p = torch.softmax(scores, dim=-1)
        return self.out((p @ v).transpose(1, 2).reshape(b, n, -1))


class AlibiModel(nn.Module):
    def __init__(self, full):
        super().__init__()
        self.blocks = nn.ModuleList([AlibiBlock(full=full) for _ in range(2)])

    def forward(self, x, key_padding_mask):
        for blk in self.blocks:
            x = x + blk(x, key_padding_mask)
        return x


def make_alibi(full, dynamic=False):
    def make(name, exporter, opset):
        seed(0)
        x = torch.randn(2, 12, 32)
        pad = torch.ones(2, 12, dtype=torch.bool)
        pad[1, :3] = False  # left padding: rows 0-2 of the second sequence see no key
        form = "slope·(j − i)" if full else "slope·(j − N + 1)"
        return export_case(
            name=name, model=AlibiModel(full), inputs=(x, pad), input_names=["x", "key_padding_mask"],
            output_names=["out"], source="seed:MptAlibi", exporter=exporter, opset=opset, expected_count=2,
            dynamic_axes={"x": {1: "seq"}, "key_padding_mask": {1: "seq"}, "out": {1: "seq"}} if dynamic else None,
            notes=("a dynamic sequence axis (the ALiBi ramps stay Range ops); " if dynamic else "") +
                  f"MPT-type (llm-foundry) block x2, 4 heads of 8, N 12: attn_bias = ALiBi {form} masked_fill "
                  "with finfo.min above the diagonal and on padded keys (the second sequence left-padded by 3: its "
                  "query rows 0-2 see no key), one additive bias added to the scores",
            attention=lambda recs: [default_attention_info(r, {"mask": "causal", "bias": "alibi"}) for r in recs],
        )
    return make


def make_mpt(name, exporter, opset):
    seed(0)
    cfg = MptConfig(d_model=32, n_heads=4, n_layers=2, expansion_ratio=2, max_seq_len=32, vocab_size=64,
                    use_cache=False)
    model = MptModel(cfg)
    ids = torch.randint(0, 64, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, :3] = 0
    return export_case(
        name=name, model=Wrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers MptModel", exporter=exporter, opset=opset,
        name_root=model, expected_count=2,
        notes="MptModel, 2 layers, d_model 32, 4 heads of 8, max_seq_len 32; scores + ALiBi slope·(j − 31) sliced "
              "from a (H, 1, 32) buffer, then masked_fill of the causal + padding mask; batch 2, seq 12, the second "
              "row left-padded by 3 (its query rows 0-2 see no key)",
        attention=lambda recs: [default_attention_info(r, {"mask": "causal", "bias": "alibi"}) for r in recs],
    )


# ---------------------------------------------------------------- fp16


def make_qwen3_fp16(name, exporter, opset):
    seed(0)
    cfg = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
                      use_cache=False)
    model = Qwen3Model(cfg).half()
    model.set_attn_implementation("sdpa")
    ids, mask = left_padded(pad=0)
    # right padding: under a float16 finite fill a row that sees no key is
    # rounded differently by each runtime (ONNX Runtime's CPU upcasts), so
    # the stored inputs keep a key in every row
    mask[0, 8:] = 0
    return export_case(
        name=name, model=Wrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers Qwen3Model", exporter=exporter, opset=opset,
        name_root=model, expected_count=2, tol=2e-2,
        notes="Qwen3Model in float16, 2 layers, hidden 32, 4 query heads over 2 kv heads of 8, sdpa; batch 2, "
              "seq 12, the first row right-padded after 8 tokens",
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 2, "mask": "causal"})
                                for r in recs],
    )


# ---------------------------------------------------------------- Gemma 3


def make_gemma3(name, exporter, opset):
    seed(0)
    cfg = Gemma3TextConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64,
                           sliding_window=4, layer_types=["sliding_attention", "full_attention"], use_cache=False)
    model = Gemma3TextModel(cfg)
    model.set_attn_implementation("sdpa")
    ids, mask = left_padded()
    return export_case(
        name=name, model=Wrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers Gemma3TextModel", exporter=exporter, opset=opset,
        name_root=model, expected_count=2, onnx_differs=DYNAMO_FILL if exporter == "dynamo" and opset < 23 else "",
        notes="Gemma3TextModel, 2 layers (sliding_attention with window 4, then full_attention), hidden 32, 4 query "
              "heads over 2 kv heads of 8, sdpa; batch 2, seq 12, the first row left-padded by 4 (rows 0-3 see no "
              "key); the sliding layer's band, causal and padding terms are one bool mask",
        attention=lambda recs: [default_attention_info(r, {"head_dim": 8, "kv_heads": 2, "mask": "causal",
                                                           **({"window": 4} if i == 0 else {})})
                                for i, r in enumerate(recs)],
    )


# ---------------------------------------------------------------- GPT-2


def make_gpt2_dynseq(name, exporter, opset):
    seed(0)
    model = GPT2Model(GPT2Config(vocab_size=64, n_positions=64, n_embd=32, n_layer=2, n_head=4))
    model.set_attn_implementation("sdpa")
    ids, mask = left_padded(seq=16)
    axes = {"input_ids": {1: "sequence"}, "attention_mask": {1: "sequence"}, "last_hidden_state": {1: "sequence"}}
    dyn = {"dynamic_axes": axes} if exporter == "torchscript" else {
        "dynamic_shapes": ({1: torch.export.Dim("sequence")},) * 2}
    return export_case(
        name=name, model=Wrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers GPT2Model", exporter=exporter, opset=opset,
        name_root=model, expected_count=2, onnx_differs=DYNAMO_FILL if exporter == "dynamo" and opset < 23 else "",
        **dyn,
        notes="GPT2Model (transformers 5.24), 2 layers, n_embd 32, 4 heads of 8, sdpa; a dynamic sequence axis "
              "(legacy dynamic_axes for TorchScript, dynamic_shapes for dynamo); batch 2, seq 16, the first row "
              "left-padded by 4 (rows 0-3 see no key)",
        attention=lambda recs: [default_attention_info(r, {"mask": "causal"}) for r in recs],
    )


if __name__ == "__main__":
    fam = Family("causal")
    for suffix, exporter, opset in [("", "torchscript", 17), ("_dynamo", "dynamo", 18), ("_dynamo_op23", "dynamo", 23)]:
        for kind in ("gpt2", "neox", "qwen3"):
            # Optimum exports through TorchScript; its decoder with past only there
            for past, tail in ((0, ""), (8, "_past")) if exporter == "torchscript" else ((0, ""),):
                name = f"optimum_{kind}{tail}{suffix}"
                if opset == 23 and kind != "gpt2":
                    fam.expected_failure(name, ROTARY_23, make_optimum(kind, past), exporter, opset)
                else:
                    fam.case(name, make_optimum(kind, past), exporter, opset)
        fam.case("mpt_alibi" + suffix, make_alibi(True), exporter, opset)
        fam.case("mpt_alibi_perkey" + suffix, make_alibi(False), exporter, opset)
        fam.case("hf_mpt" + suffix, make_mpt, exporter, opset)
        fam.case("gemma3" + suffix, make_gemma3, exporter, opset)
        fam.case("gpt2_sdpa_dynseq" + suffix, make_gpt2_dynseq, exporter, opset)
    fam.case("mpt_alibi_dynamic", make_alibi(True, dynamic=True), "torchscript", 17)
    fam.case("qwen3_fp16_dynamo", make_qwen3_fp16, "dynamo", 18)
    fam.case("qwen3_fp16_dynamo_op23", make_qwen3_fp16, "dynamo", 23)
    fam.finish()
