package passes_test

import (
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	. "github.com/attnopt/attnopt/passes"
)

// layoutOps counts the nodes that only move data around.
func layoutOps(m *graph.Model) int {
	n := 0
	for _, x := range m.Graph.Nodes {
		if x.Is("Transpose") || x.Is("Reshape") || x.Is("Squeeze") || x.Is("Unsqueeze") {
			n++
		}
	}
	return n
}

// layoutGrowth is how many layout nodes a rewrite may add to a fixture, with
// why; every fixture not listed must not gain any.
var layoutGrowth = map[string]map[string]int{
	// SAGAN computes out = V·Aᵀ channels-first: V and the output are
	// transposed around the fused op, which reads (…, N, D).
	"attnopt": {"sagan": 2, "sagan_dynamo": 2, "sagan_op11": 2,
		// A lifted com.microsoft.Attention packs Q, K and V as (B, S, H·D)
		// slices of one projection: FlashAttention reads each as
		// (B, H, S, D) (Reshape+Transpose) and its output goes back, and
		// the mask index becomes a key-length mask (Squeeze of the length,
		// two Unsqueezes): 11 per layer, 3 layers.
		"hf_bert_ortopt": 33,
		// flax's own einsums read Q, K, V as (B, N, H, D) and write the
		// output so: FlashAttention reads (B, H, N, D), so each is
		// transposed (passes/match/einsum.go, Match.Perm).
		"jax_mha_dropout_eval": 4,
		// XLNet's einsums read Q, K, V as (N, B, H, D): each is transposed
		// for the (B, H, N, D) op, and the output back.
		"hf_xlnet": 6},
	"ort": {
		"sagan": 2, "sagan_dynamo": 2, "sagan_op11": 2,
		// Q, K, V are graph inputs in (B, H, N, D): MultiHeadAttention
		// reads (B, N, H·D), so each gets Transpose+Reshape and the
		// output goes back (nothing of the model's to cancel against).
		"sdpa_causal": 7, "sdpa_causal_dynamo": 5, "sdpa_causal_dynamo_op23": 8,
		"sdpa_h16d4": 7, "sdpa_h16d4_dynamo": 5, "sdpa_h16d4_fp16": 7, "sdpa_h16d4_fp16_dynamo_op23": 8,
		"sdpa_h8d8": 7, "sdpa_h8d8_dynamo_op23": 8,
		// MultiHeadAttention has no grouped-query form: K and V are
		// repeated to every query head (Unsqueeze+Expand+Reshape), and
		// RoPE sits between the model's head split and the site.
		"gqa_dynamo_op23": 4, "hf_llama_gqa": 17, "hf_llama_gqa_dynamo": 18, "hf_llama_gqa_dynamo_op23": 22,
		"hf_llama_gqa_fp16": 17, "hf_falcon_mqa": 19, "hf_falcon_mqa_dynamo": 24, "mqa_expand": 1,
		// The lifted Attention's mask index becomes a key-length mask
		// MultiHeadAttention takes as its bias: a Squeeze and two
		// Unsqueezes per layer; it reads the (B, S, H·D) parts as they are.
		"hf_bert_ortopt": 9,
		// and MultiHeadAttention has no sliding window: the band is rebuilt
		// from Range (Squeeze/Unsqueeze of the lengths) as its bias, and again
		// for the guard of rows whose window holds only padding (fuse_guard.go).
		"hf_mistral_window": 27,
		// GPT-2's and BLOOM's causal term fills with finfo.min beside a
		// padding mask: a row that sees no key averages V over the keys
		// the fills leave, so the causal term is a bias plane carrying that
		// fill (built from Range: Squeeze/Unsqueeze of the lengths), not
		// unidirectional, which drops with −inf (lower_rows.go).
		"hf_gpt2": 4, "hf_gpt2_dynamo": 7, "hf_gpt2_dynamic_dynamo": 4, "hf_gpt2_dynamic_axes_dynamo": 2, "hf_bloom": 1, "hf_bloom_dynamo": 8, "hf_bloom_dynamo_op23": 8,
		// The fully-masked-row fixtures (testdata/export/export_padding.py):
		// graph-input Q/K/V for SDPA; for Qwen3 the GQA repeat plus, under
		// dynamo, the finfo.min causal plane; for ModernBERT the local
		// window's band plane.
		"sdpa_dead_row": 7, "sdpa_dead_row_dynamo": 5, "sdpa_dead_row_dynamo_op23": 8,
		"hf_qwen3_leftpad": 17, "hf_qwen3_leftpad_dynamo": 12, "hf_qwen3_leftpad_dynamo_op23": 22,
		"hf_modernbert_pad": 11, "hf_modernbert_pad_dynamo_op23": 18,
		// The causal constructions (testdata/export/export_causal.py): the
		// finfo.min causal plane as above (Optimum, MPT, ALiBi, fp16), the
		// GQA repeat (Qwen3, Gemma 3) and Gemma 3's band plane.
		"optimum_gpt2_dynamo": 4, "optimum_gpt2_dynamo_op23": 4, "optimum_neox_dynamo": 5, "optimum_qwen3_dynamo": 7,
		"optimum_real_neox": 5,
		// MultiHeadAttention's attention_bias is a (B|1, H|1, Nq, Nk) plane:
		// a padding mask the rewrite builds on one query row
		// (passes/match/keyrow.go SameRows) is viewed and expanded back to
		// it; flax's (B, N, H, D) operands are merged by a Reshape each.
		"jax_mha_mask": 2, "jax_mha_causal_pad": 5, "jax_nnx_dpa_mask_op23": 2, "jax_mha_dropout_eval": 3,
		// XLNet's sequence-first (N, B, H, D) operands: a Transpose and a
		// Reshape each to MultiHeadAttention's (B, N, H·D), and back; its
		// position bias is the attention_bias.
		"hf_xlnet": 14,
		"hf_mpt":   7, "hf_mpt_dynamo": 8, "hf_mpt_dynamo_op23": 8,
		"mpt_alibi": 4, "mpt_alibi_dynamo": 8, "mpt_alibi_dynamo_op23": 8,
		"mpt_alibi_perkey": 6, "mpt_alibi_perkey_dynamo": 8, "mpt_alibi_perkey_dynamo_op23": 8,
		"gemma3": 22, "gemma3_dynamo": 12, "gemma3_dynamo_op23": 27, "gpt2_sdpa_dynseq_dynamo_op23": 9,
		"qwen3_fp16_dynamo": 12, "qwen3_fp16_dynamo_op23": 22,
		// Three unbind adapters per block stay (the model's output-side
		// rearrange cancels; its Transpose of the packed QKV is re-permuted
		// once, cleanup_sink.go).
		"monai_unetr": 12, "monai_unetr_dynamo": 12,
		// ONNX Attention read the (B, H, N, D) parts directly; MHA reads
		// each through one Reshape after the re-permuted Transpose.
		"timm_vit_sdpa_dynamo_op23": 2,
		// Sequence-first layouts with batch·heads folded by Reshape: the
		// adapters do not meet a Transpose they cancel.
		"nn_transformer": 12, "nn_transformer_dynamo": 17, "nn_transformer_dynamo_op23": 20,
		"tv_swinv2_dynamo": 10, "tv_swinv2_dynamo_op23": 10,
	},
}

// No rewrite grows a fixture's layout ops beyond what its table row says.
func TestLayoutOpsDoNotGrow(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "models", "*", "model.onnx"))
	if len(files) == 0 {
		t.Skip("no fixtures")
	}
	for target, allowed := range layoutGrowth {
		for _, f := range files {
			name := filepath.Base(filepath.Dir(f))
			m, err := graph.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			before := layoutOps(m)
			if _, err := Rewrite(m, Options{Target: target}); err != nil {
				t.Fatalf("%s/%s: %v", name, target, err)
			}
			if grew := layoutOps(m) - before; grew > allowed[name] {
				t.Errorf("%s/%s: %d → %d layout ops (+%d, allowed +%d)", name, target, before, before+grew, grew, allowed[name])
			}
		}
	}
}
