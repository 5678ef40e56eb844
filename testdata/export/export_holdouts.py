"""Attention forms the matcher does not handle yet ("holdouts"), with numbers:

* ``hf_funnel``: transformers ``FunnelBaseModel`` (2 blocks of 1 layer, the
  second pooling the queries) with a right-padded ``attention_mask``; the
  mask is applied as ``scores - INF * (1 - mask)`` with INF = 1e6 (a Sub,
  not an Add), and the relative-shift positional scores are gathered.
* ``hf_xlnet``: transformers ``XLNetModel`` (2 layers) with an
  ``attention_mask``: relative attention whose positional scores go through
  ``rel_shift_bnij`` (Reshape / Slice / Reshape / Gather with shapes computed
  from Shape ops), mask applied as ``scores - 1e30 * mask``, Softmax(axis=3).
* ``hf_informer``: transformers ``InformerModel`` (1 encoder + 1 decoder
  layer) with ProbSparse self-attention: keys sampled with ``torch.randint``
  (RandomUniformLike in the graph), top-u queries by a sparsity measure,
  gathered, attended, scattered into a mean-of-V (encoder) or cumsum-of-V
  (decoder) context.  The two ProbSparse sites are defensible refusals; the
  decoder's cross-attention is ordinary attention.
* ``natten_unfold``: a small NATTEN-style neighbourhood attention on a 4x4
  map: K/V 3x3 neighbourhoods by ``F.unfold`` (zero padding, border
  positions masked), scores as ``(q.unsqueeze(-2) * k_neigh).sum(-1)`` (no
  MatMul), softmax over the 9 neighbours, weighted sum with ``v_neigh``.  A
  defensible refusal.

transformers 5.24 (requirements.txt) is not what these were made with: run
with the HF Optimum virtual environment (transformers 4.57.6)::

    cd testdata/export && /tmp/venv-optimum/bin/python export_holdouts.py [NAME ...]
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import transformers
from transformers import (FunnelBaseModel, FunnelConfig, InformerConfig, InformerModel, XLNetConfig, XLNetModel)

from common import Family, default_attention_info, export_case, seed

VENV_NOTE = (f"exported with transformers {transformers.__version__} from /tmp/venv-optimum (requirements.txt pins "
             "transformers 5.24, not installed there)")


class TextWrapper(nn.Module):
    def __init__(self, model, **kw):
        super().__init__()
        self.model = model
        self.kw = kw

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, **self.kw).last_hidden_state


FUNNEL_WHY = ("a finite fill subtracted beside position biases (scores + positional + token-type - 1e6*(1 - mask)): on a row that keeps no key the source's result is its own float rounding of that sum, which a fused op adding one combined mask does not reproduce; attnopt refuses it (passes/match/rows.go floorBesideTerms)")


def make_funnel(name):
    seed(0)
    cfg = FunnelConfig(vocab_size=100, block_sizes=[1, 1], num_decoder_layers=1, d_model=32, n_head=4, d_head=8,
                       d_inner=64, max_position_embeddings=64)
    model = FunnelBaseModel(cfg)
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 11:] = 0  # second row right-padded: 11 real tokens
    notes = ("FunnelBaseModel, block_sizes [1, 1] (2 layers; the second pools the queries to 8 and attends to the 16 "
             "unpooled keys; separate_cls, truncate_seq, pool_q_only), d_model 32, 4 heads of 8, "
             "attention_type relative_shift; batch 2, seq 16, attention_mask int64 with the second row padded after "
             "11 tokens; the model casts it to float (type_as) and masks with attn_score - 1e6 * (1 - mask[:, None, "
             "None]) (a Sub), content score = einsum(q*scale + r_w_bias*scale, k), plus a relative-shift positional "
             "score (gather) and a token-type score (Where); " + VENV_NOTE)
    return export_case(
        name=name, model=TextWrapper(model), inputs=(ids, mask), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], source="transformers.models.funnel.modeling_funnel.FunnelBaseModel",
        name_root=model, name_prefix="", notes=notes, expected_count=2,
        attention={"head_dim": 8, "mask": "additive", "fusable": False, "why_not_fusable": FUNNEL_WHY})


def make_xlnet(name):
    seed(0)
    cfg = XLNetConfig(vocab_size=100, d_model=32, n_layer=2, n_head=4, d_inner=64, mem_len=None,
                      use_mems_eval=False)
    model = XLNetModel(cfg)
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 11:] = 0
    notes = ("XLNetModel, 2 layers, d_model 32, 4 heads of 8, no mems, content stream only; batch 2, seq 16, "
             "attention_mask int64 with the second row padded after 11 tokens (input_mask = 1 - mask, combined with "
             "a non-target mask -eye, > 0, float); scores (ac + rel_shift_bnij(bd)) * scale - 1e30 * "
             "einsum('ijbn->bnij', mask), Softmax(dim=3); " + VENV_NOTE)
    return export_case(
        name=name, model=TextWrapper(model, use_mems=False), inputs=(ids, mask),
        input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
        source="transformers.models.xlnet.modeling_xlnet.XLNetModel", name_root=model, notes=notes,
        expected_count=2, attention={"head_dim": 8, "mask": "additive"})


class InformerWrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, past_values, past_time_features, past_observed_mask, future_values, future_time_features):
        out = self.model(past_values=past_values, past_time_features=past_time_features,
                         past_observed_mask=past_observed_mask, future_values=future_values,
                         future_time_features=future_time_features, use_cache=False)
        return out.last_hidden_state, out.encoder_last_hidden_state


class _NumpyForTrace:
    """numpy, except that log1p takes a traced size (a 0-d tensor under the
    TorchScript trace, where ``np.log1p(size)`` returns a tensor without
    ``astype``): the sizes are static in these fixtures."""

    def __getattr__(self, attr):
        return getattr(np, attr)

    @staticmethod
    def log1p(x):
        return np.log1p(int(x))


SCATTER_OLD = "context[dim_for_slice, top_u_sparsity_measurement, :] = attn_output"
SCATTER_NEW = "context[dim_for_slice.expand_as(top_u_sparsity_measurement), top_u_sparsity_measurement, :] = attn_output"


def patch_informer():
    """Two export-only changes to transformers 4.57.6's ProbSparse attention,
    neither of which changes what it computes:

    * its ``np.ceil(np.log1p(L))`` gets a 0-d tensor under the TorchScript
      trace: numpy is replaced, in that module only, by ``_NumpyForTrace``;
    * ``context[arange(B*H).unsqueeze(-1), top_u, :] = attn_output`` (indices
      (B*H, 1) and (B*H, u) broadcast against each other) fails the exporter's
      shape inference ("ONNX Expand input shape constraint not satisfied",
      torch 2.15): the row index is expanded to (B*H, u) first, which is the
      same index_put."""
    import inspect
    import textwrap

    import transformers.models.informer.modeling_informer as mi
    cls = mi.InformerProbSparseAttention
    if getattr(cls, "_holdouts_patched", False):
        return
    mi.np = _NumpyForTrace()
    src = textwrap.dedent(inspect.getsource(cls.forward))
    src = "\n".join(line for line in src.splitlines() if not line.startswith("@"))  # kwarg-rename decorator
    if src.count(SCATTER_OLD) != 1:
        raise RuntimeError("InformerProbSparseAttention.forward changed: scatter line not found")
    ns = {}
    exec(compile(src.replace(SCATTER_OLD, SCATTER_NEW), mi.__file__, "exec"), mi.__dict__, ns)
    cls.forward = ns["forward"]
    cls._holdouts_patched = True


def make_informer(name):
    patch_informer()
    seed(0)
    cfg = InformerConfig(prediction_length=4, context_length=12, input_size=1, lags_sequence=[1, 2, 3],
                         num_time_features=1, d_model=32, encoder_ffn_dim=64, decoder_ffn_dim=64,
                         encoder_attention_heads=4, decoder_attention_heads=4, encoder_layers=1, decoder_layers=1,
                         attention_type="prob", sampling_factor=5, distil=True)
    model = InformerModel(cfg)
    past_len = 12 + 3
    past_values = torch.randn(2, past_len)
    past_time = torch.linspace(0, 1, past_len + 4).reshape(1, -1, 1).repeat(2, 1, 1)
    past_time_features, future_time_features = past_time[:, :past_len].contiguous(), past_time[:, past_len:].contiguous()
    past_observed_mask = torch.ones(2, past_len)
    future_values = torch.randn(2, 4)

    def attention(records):
        items = []
        for r in records:
            mod = r["module"] or ""
            if mod.endswith("self_attn"):
                # ProbSparse: the softmax sees (B*H, u, L_K), heads folded into the batch
                s = r["shape"]
                items.append(default_attention_info(r, {
                    "heads": 4, "q_len": s[-2], "kv_len": s[-1], "head_dim": 8,
                    "mask": "causal" if mod.startswith("decoder") else "none",
                    "fusable": False,
                    "why_not_fusable": ("ProbSparse attention: keys sampled at random (RandomUniformLike), the top-u "
                                        "queries by a sparsity measure are gathered (TopK, GatherND), attended, and "
                                        "scattered (ScatterND) into a " +
                                        ("cumsum-of-V" if mod.startswith("decoder") else "mean-of-V") +
                                        " context; not exact attention over all queries")}))
            else:
                s = r["shape"]
                items.append(default_attention_info(r, {"heads": 4, "q_len": s[-2], "kv_len": s[-1], "head_dim": 8,
                                                        "mask": "none"}))
        return items

    notes = ("InformerModel, attention_type prob (ProbSparse), sampling_factor 5, 1 encoder layer (distil: no conv "
             "layer with 1 layer) + 1 decoder layer, d_model 32, 4 heads of 8 folded into the batch (bmm on (B*H, "
             "L, 8)); context_length 12, prediction_length 4, lags [1, 2, 3], 1 time feature, batch 2; "
             "u = min(5 * ceil(log1p(L_Q)), L_Q) equals L_Q here (12 and 4), so every query is selected and the "
             "outputs do not depend on the random key sample (the graph still samples: RandomUniformLike); "
             "encoder self-attention (ProbSparse, mean-of-V context), decoder self-attention (ProbSparse with "
             "the causal mask gathered for the top-u rows, cumsum-of-V context), decoder cross-attention (plain "
             "bmm attention, 4 x 12 keys, fusable); " + VENV_NOTE)
    return export_case(
        name=name, model=InformerWrapper(model),
        inputs=(past_values, past_time_features, past_observed_mask, future_values, future_time_features),
        input_names=["past_values", "past_time_features", "past_observed_mask", "future_values",
                     "future_time_features"],
        output_names=["last_hidden_state", "encoder_last_hidden_state"],
        source="transformers.models.informer.modeling_informer.InformerModel", name_root=model, notes=notes,
        expected_count=3, attention=attention)


class NeighborhoodAttentionUnfold(nn.Module):
    """NATTEN-style 2-D neighbourhood attention, k x k window, with F.unfold."""

    def __init__(self, dim=32, heads=4, kernel=3, grid=(4, 4)):
        super().__init__()
        self.heads, self.kernel, self.grid = heads, kernel, grid
        self.hd = dim // heads
        self.scale = self.hd ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        h, w = grid
        # 1 where the neighbour lies outside the map (zero padding of unfold)
        ones = torch.ones(1, 1, h, w)
        valid = F.unfold(ones, kernel, padding=kernel // 2).reshape(1, 1, kernel * kernel, h * w).transpose(-1, -2)
        self.register_buffer("pad_bias", (1.0 - valid) * -1e4)  # (1, 1, N, k*k)

    def forward(self, x):  # x: (B, N, C), N = H*W, row-major
        b, n, c = x.shape
        h, w = self.grid
        kk = self.kernel * self.kernel
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, n, self.heads, self.hd).transpose(1, 2) * self.scale  # (B, H, N, D)

        def neigh(t):  # (B, N, C) -> (B, H, N, k*k, D)
            t = t.transpose(1, 2).reshape(b, c, h, w)
            t = F.unfold(t, self.kernel, padding=self.kernel // 2)  # (B, C*k*k, N)
            t = t.reshape(b, self.heads, self.hd, kk, n)
            return t.permute(0, 1, 4, 3, 2)

        k_n, v_n = neigh(k), neigh(v)
        scores = (q.unsqueeze(-2) * k_n).sum(-1) + self.pad_bias  # (B, H, N, k*k)
        p = scores.softmax(dim=-1)
        out = (p.unsqueeze(-1) * v_n).sum(-2)  # (B, H, N, D)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


def make_natten(name):
    seed(0)
    model = NeighborhoodAttentionUnfold()
    x = torch.randn(2, 16, 32)
    notes = ("seed NATTEN-style neighbourhood attention on a 4x4 map (16 tokens, row-major), 4 heads of 8, 3x3 "
             "window: K and V neighbourhoods by F.unfold(kernel 3, padding 1) (zero padded; a constant -1e4 bias "
             "masks the out-of-map neighbours), scores (q * scale).unsqueeze(-2) * k_neigh summed over the head dim "
             "(Mul + ReduceSum, no MatMul), softmax over the 9 neighbours, (p.unsqueeze(-1) * v_neigh).sum(-2)")
    return export_case(
        name=name, model=model, inputs=(x,), input_names=["x"], output_names=["y"],
        source="seed:holdouts.NeighborhoodAttentionUnfold", notes=notes, expected_count=1,
        attention={"heads": 4, "q_len": 16, "kv_len": 9, "head_dim": 8, "mask": "additive", "grid": [4, 4],
                   "token_order": "channels_last", "fusable": False,
                   "why_not_fusable": ("neighbourhood attention: each query attends to its own 3x3 window of "
                                       "gathered keys (unfold), scores by Mul + ReduceSum over the head dim rather "
                                       "than a MatMul of shared K; no dense Q K^T to fuse")})


if __name__ == "__main__":
    fam = Family("holdouts")
    fam.case("hf_funnel", make_funnel)
    fam.case("hf_xlnet", make_xlnet)
    fam.case("hf_informer", make_informer)
    fam.case("natten_unfold", make_natten)
    fam.finish()
