package passes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
)

// corpusRoot is the shared corpus beside the repo (internal/corpus); nothing
// of it is copied into the repo and tests skip when it is absent.
func corpusRoot(t *testing.T) string { return corpus.Require(t) }

type corpusWant struct {
	// sites -1: a single fused op, lifted or refused for a known reason.
	sites, fused int
	// reason must appear in every rejection (empty: no rejection expected).
	reason string
}

// Third-party models, one row each, with the reason for every Softmax that is
// not a site.
var corpusTable = map[string]corpusWant{
	"onnxruntime/TFBertForQuestionAnswering.onnx":          {24, 0, ""}, // keras2onnx, ReduceProd reshape chains
	"onnxruntime/attention_distilbert.onnx":                {1, 0, ""},
	"onnxruntime/attention_int32_mask.onnx":                {1, 0, ""},
	"onnxruntime/attention_mask1d_fp32.onnx":               {1, 0, ""},
	"onnxruntime/attention_no_mask_fp16.onnx":              {1, 0, ""},
	"onnxruntime/attention_past_state.onnx":                {1, 0, ""}, // past concat + causal slice of the bias buffer
	"onnxruntime/attention_past_unidir.onnx":               {1, 0, ""}, // causal Where + padding bias
	"onnxruntime/bert_toy_optimized.onnx":                  {5, 0, ""},
	"onnxruntime/gpt2_past.onnx":                           {12, 0, ""}, // dynamic Reshape chains, Where with fill -10000
	"onnxruntime/gpt2_past_mask_one_layer.onnx":            {1, 0, ""},
	"onnxruntime/attention_mha.onnx":                       {0, 1, "projection bias"}, // MHA with attention_bias and bias
	"onnxruntime/dmmha_self_attn.onnx":                     {0, 1, ""},
	"onnxruntime/gemma3-vision-attention_fp32.onnx":        {1, 0, ""},                // com.microsoft.Attention lifted (lift_msattention.go)
	"onnxruntime/hf_fp32_decoder_attention_with_past.onnx": {0, 2, "projection bias"}, // unidirectional MHA: a site, its bias not lifted
	"onnxruntime/hf_fp32_encoder_self_attention.onnx":      {1, 0, ""},                // com.microsoft.Attention lifted (lift_msattention.go)
	"onnxruntime/phi-4-v-instruct-vision-attention.onnx":   {1, 0, ""},                // com.microsoft.Attention lifted (lift_msattention.go)
	"onnxruntime-genai/decoder.onnx":                       {0, 2, ""},
	// BLOOM training graph: the score chain (baddbmm, view to (B,H,N,N),
	// masked_fill) matches in all 3 layers, but SoftmaxGrad reads the
	// probabilities for the backward pass, so none can be fused.
	"onnxruntime/3layer_bloom_optimized_training.onnx": {0, 0, "SoftmaxGrad"},
	// Megatron GPT-2 masks with w·b − 10000·(1−b): a multiplicative mask of
	// a float input, not provably 0/1 (with a bool's Cast it fuses).
	"onnxruntime/gpt2_megatron.onnx": {0, 0, "multiplicative mask that is not provably 0 or 1"},
	// The GPT-2 decoder lives inside BeamSearch's subgraph attributes: they
	// are matched like the main graph (nested.go), but its attention is
	// already com.microsoft.Attention, which no rule lifts (corpusNested).
	"onnxruntime/tiny_gpt2_beamsearch.onnx": {0, 0, ""},
	// Polygraphy's toy graphs: untyped inputs at opset 11 (axis=1 cannot be
	// proved the last axis), and a MatMul whose operands are not Q and Kᵀ.
	"tensorrt/attention.onnx":       {0, 0, "cannot be proved a row softmax"},
	"tensorrt/multi_attention.onnx": {0, 0, "cannot be proved a row softmax"},
	"tensorrt/attention_head.onnx":  {0, 0, "Q's head dim is 100"},
}

// onnxNodeWant derives the expectation for ONNX's own Attention backend tests:
// the single op is lifted into a site (lift.go), or stays fused with one of
// liftRefusals as its reason (checked in TestCorpusSites); the _expanded twin
// is one site unless it exposes an intermediate (its softcap, ONNX's
// Div/Tanh/Mul, is matched: passes/match/softcap.go).
func onnxNodeWant(folder string) corpusWant {
	switch {
	case !strings.HasSuffix(folder, "_expanded"):
		return corpusWant{sites: -1}
	case strings.Contains(folder, "qk_matmul"):
		return corpusWant{0, 0, "fusing would drop it"}
	}
	return corpusWant{1, 0, ""}
}

// corpusNested is what each corpus model holds inside subgraphs: nested
// sites, and fused ops that stay as they are; models not listed hold none.
var corpusNested = map[string]struct{ sites, kept int }{
	"onnxruntime/tiny_gpt2_beamsearch.onnx": {0, 5},
}

func TestCorpusSites(t *testing.T) {
	root := corpusRoot(t)
	seen, lifted := 0, 0
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || filepath.Ext(path) != ".onnx" {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		want, ok := corpusTable[rel]
		if strings.HasPrefix(rel, "onnx/") {
			want, ok = onnxNodeWant(filepath.Base(filepath.Dir(path))), true
		}
		if !ok {
			t.Errorf("%s: not in the expectation table", rel)
			return nil
		}
		seen++
		m, err := graph.Load(path)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		res := FindSites(m.Graph)
		nested := corpusNested[rel]
		if n := len(NestedSites(res.Nested)); n != nested.sites || len(res.Nested)-n != nested.kept {
			t.Errorf("%s: %d sites and %d other ops in subgraphs, want %d and %d: %+v", rel, n, len(res.Nested)-n, nested.sites, nested.kept, res.Nested)
		}
		if want.sites == -1 {
			lifted += checkLiftedOrRefused(t, rel, res)
			return nil
		}
		if len(res.Sites) != want.sites || len(res.Fused) != want.fused {
			t.Errorf("%s: %d sites, %d fused; want %d, %d", rel, len(res.Sites), len(res.Fused), want.sites, want.fused)
		}
		for _, r := range res.Rejected {
			if want.reason == "" || !strings.Contains(r.Reason, want.reason) {
				t.Errorf("%s: unexpected rejection of %s: %s", rel, r.Softmax.Label(), r.Reason)
			}
		}
		if want.reason != "" && len(res.Rejected) == 0 {
			t.Errorf("%s: expected a rejection mentioning %q", rel, want.reason)
		}
		return nil
	})
	if lifted < 36 {
		t.Errorf("only %d of ONNX's single-op Attention tests lifted", lifted)
	}
	if seen < 170 {
		t.Errorf("only %d corpus models checked", seen)
	}
}

// liftRefusals are the forms of ONNX Attention that cannot be lifted
// exactly and stay fused.
var liftRefusals = []string{"qk_matmul_output", "nonpad_kv_seqlen", "is_causal with 6 new keys for 4 queries"}

// checkLiftedOrRefused checks a single-op model: one lifted site, or the op
// kept with a known reason. It returns 1 when lifted.
func checkLiftedOrRefused(t *testing.T, rel string, res *Result) int {
	switch {
	case len(res.Sites) == 1 && len(res.Fused) == 0 && len(res.Rejected) == 0:
		return 1
	case len(res.Sites) == 0 && len(res.Fused) == 1 && len(res.Rejected) == 1:
		for _, r := range liftRefusals {
			if strings.Contains(res.Rejected[0].Reason, r) {
				return 0
			}
		}
		t.Errorf("%s: not lifted for an unexpected reason: %s", rel, res.Rejected[0].Reason)
	default:
		t.Errorf("%s: %d sites, %d fused, %d rejected; want one lifted site or one refusal", rel, len(res.Sites), len(res.Fused), len(res.Rejected))
	}
	return 0
}
