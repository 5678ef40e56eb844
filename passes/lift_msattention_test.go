package passes_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/passes/match"
)

// TestLiftMSAttention: each single-op com.microsoft.Attention fixture
// (testdata/export/export_msattention.py, outputs from ONNX Runtime 1.24.3's
// CPU kernel) is lifted with the variant given, or refused with the reason
// given. Every lifted one is rewritten with --target attnopt and --target
// ort (which leaves a causal site with a cache, saying why), no
// com.microsoft.Attention is left, and the rewrite reproduces ONNX Runtime's
// stored outputs, present included, in the Go runtime and in ONNX Runtime;
// the original also runs in the Go runtime (what validate compares against).
func TestLiftMSAttention(t *testing.T) {
	runners, ortOK, customOK := testRunners(t)
	t.Logf("ONNX Runtime checked: %v, custom ops: %v", ortOK, customOK)
	const unaligned = "MultiHeadAttention's unidirectional alignment is not verified for unequal lengths"
	for _, c := range []struct {
		name string
		want string // the variant, or the refusal's reason
		// ortLeaves is why --target ort leaves the site ("" when it fuses).
		ortLeaves string
	}{
		{"plain", "lifted:com.microsoft.Attention/rank3/scale-default", ""},
		{"unidirectional", "lifted:com.microsoft.Attention/rank3/scale-default/causal", ""},
		{"mask_2d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"mask_1d_lengths", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"mask_1d_spans", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"mask_3d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"empty_2d", "lifted:com.microsoft.Attention/rank3/scale-attr/mask-additive", ""},
		{"empty_1d_lengths", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"empty_1d_spans", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"empty_3d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"attention_bias", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"qkv_sizes", "lifted:com.microsoft.Attention/rank3/scale-default", ""},
		{"fp16_mask_2d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"dynamic", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", ""},
		{"past_unidirectional", "lifted:com.microsoft.Attention/rank3/scale-default/causal/kv-cache", unaligned},
		{"past_decode", "lifted:com.microsoft.Attention/rank3/scale-default/causal/kv-cache", unaligned},
		{"past_mask_2d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive/kv-cache", ""},
		{"past_mask_1d_lengths", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive/kv-cache", ""},
		{"present_no_past", "lifted:com.microsoft.Attention/rank3/scale-default", ""},
		{"refused_unidirectional_mask", "causal (unidirectional or a triangular attention_bias) with mask_index", ""},
	} {
		dir := filepath.Join("..", "testdata", "msattention", c.name)
		path := filepath.Join(dir, "model.onnx")
		m, err := graph.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		res := FindSites(m.Graph)
		if strings.HasPrefix(c.name, "refused_") {
			if len(res.Sites) != 0 || len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0].Reason, c.want) || res.Rejected[0].At == "" {
				t.Errorf("%s: %d sites, rejections %+v; want the refusal %q", c.name, len(res.Sites), res.Rejected, c.want)
			}
			continue
		}
		if len(res.Sites) != 1 || res.Sites[0].Variant != c.want {
			t.Errorf("%s: %d sites %+v (rejected %+v); want one %s", c.name, len(res.Sites), res.Sites, res.Rejected, c.want)
			continue
		}
		ins, want := loadDataSet(t, m, filepath.Join(dir, "test_data_set_0"))
		t.Run(c.name+"/original", func(t *testing.T) {
			checkStoredOutputs(t, m, m, ins, want, runners[:1], true)
		})
		for _, target := range []string{"attnopt", "ort"} {
			t.Run(c.name+"/"+target, func(t *testing.T) {
				rew, _ := graph.Load(path)
				rc, err := Rewrite(rew, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				if target == "ort" && c.ortLeaves != "" {
					if rc.FusedCount() != 0 || !strings.Contains(rc.Actions[0].Reason, c.ortLeaves) {
						t.Fatalf("fused %d (%s); want it left: %s", rc.FusedCount(), rc.Actions[0].Reason, c.ortLeaves)
					}
					return
				}
				if rc.FusedCount() != 1 {
					t.Fatalf("not fused: %s", rc.Actions[0].Reason)
				}
				for _, n := range rew.Graph.Nodes {
					if OpName(n) == "com.microsoft.Attention" {
						t.Fatal("com.microsoft.Attention left")
					}
				}
				data, _ := rew.Marshal()
				if rew, err = graph.LoadBytes(data, ""); err != nil {
					t.Fatal(err)
				}
				checkStoredOutputs(t, m, rew, ins, want, runners, target == "attnopt" && !customOK)
			})
		}
	}
}

// TestLiftMSAttentionRules: forms built here that the fixtures do not
// cover. Lifted ones (no bias, which ONNX Runtime 1.24.3's CPU kernel
// crashes on; a triangular attention_bias; opset 10 slices) are rewritten
// for attnopt and ort and compared with the original in the Go runtime;
// refused ones name the node or value and the reason.
func TestLiftMSAttentionRules(t *testing.T) {
	const bsz, seq, din, heads = 2, 5, 12, 3
	for _, c := range []struct {
		name  string
		opset int64
		bias  bool
		mask  []any // mask_index dims (int32), nil for none
		past  []any // past dims, nil for none
		ab    string
		attrs []*onnxpb.AttributeProto
		cols  int64
		want  string     // a variant, or the refusal's reason
		code  match.Code // the refusal's code
	}{
		{"no bias", 17, false, nil, nil, "", nil, 36, "lifted:com.microsoft.Attention/rank3/scale-default", 0},
		{"opset 10 slices", 10, true, []any{bsz, seq}, nil, "", nil, 36, "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive", 0},
		{"causal attention_bias", 17, true, nil, nil, "causal", nil, 36, "lifted:com.microsoft.Attention/rank3/scale-default/causal", 0},
		{"causal attention_bias and mask_index", 17, true, []any{bsz, seq}, nil, "causal", nil, 36, "causal (unidirectional or a triangular attention_bias) with mask_index", match.CodeCausal},
		{"past of rank 4", 17, true, nil, []any{2, bsz, heads, 3}, "", nil, 36, "is not (2, B, H, P, D)", match.CodeShape},
		{"past with other heads", 17, true, nil, []any{2, bsz, 2, 3, 6}, "", nil, 36, "is not (2, B, H, P, D) for 3 heads of 4", match.CodeShape},
		{"past", 17, true, nil, []any{2, bsz, heads, 3, 4}, "", nil, 36, "lifted:com.microsoft.Attention/rank3/scale-default/kv-cache", 0},
		{"do_rotary", 17, true, nil, nil, "", []*onnxpb.AttributeProto{testgraph.Int("do_rotary", 1)}, 36, "do_rotary", match.CodeUnsupported},
		{"shared buffer", 17, true, nil, nil, "", []*onnxpb.AttributeProto{testgraph.Int("past_present_share_buffer", 1)}, 36, "past_present_share_buffer", match.CodeUnsupported},
		{"4-D mask", 17, true, []any{bsz, 1, 8, 8}, nil, "", nil, 36, "4-D mask_index", match.CodeMask},
		{"(3B+2) mask", 17, true, []any{3*bsz + 2}, nil, "", nil, 36, "is none of (B), (2B), (B, T), (B, S, T)", match.CodeMask},
		{"1-D mask at opset 10", 10, true, []any{bsz}, nil, "", nil, 36, "need Range (opset 11)", match.CodeMask},
		{"Q and K sizes differ", 17, true, nil, nil, "", []*onnxpb.AttributeProto{testgraph.Ints("qkv_hidden_sizes", 12, 6, 18)}, 36, "Q and K differ", match.CodeShape},
		{"sizes do not split", 17, true, nil, nil, "", []*onnxpb.AttributeProto{testgraph.Ints("qkv_hidden_sizes", 12, 12, 6)}, 36, "ONNX Runtime refuses it: node \"Attention_3\" (com.microsoft.Attention): qkv_hidden_sizes [12 12 6] do not add up to the weights' 36 columns", match.CodeRuntime},
		{"columns not in three", 17, true, nil, nil, "", nil, 35, "ONNX Runtime refuses it: node \"Attention_3\" (com.microsoft.Attention): weights \"c_1\" have 35 columns, not three equal parts", match.CodeRuntime},
		{"heads do not divide", 17, true, nil, nil, "", []*onnxpb.AttributeProto{testgraph.Ints("qkv_hidden_sizes", 10, 10, 16)}, 36, "ONNX Runtime refuses it: node \"Attention_3\" (com.microsoft.Attention): hidden size 10 is not a multiple of num_heads 3", match.CodeRuntime},
	} {
		build := func() *graph.Model {
			b := testgraph.New(c.opset)
			b.Import("com.microsoft", 1)
			ins := []string{b.Input("x", graph.Float32, bsz, seq, din), b.Weight(graph.Float32, din, c.cols), ""}
			if c.bias {
				ins[2] = b.Weight(graph.Float32, c.cols)
			}
			if c.mask != nil || c.past != nil {
				ins = append(ins, "")
			}
			if c.mask != nil {
				ins[3] = b.Input("mask_index", graph.Int32, c.mask...)
			}
			if c.past != nil {
				ins = append(ins, b.Input("past", graph.Float32, c.past...))
			}
			if c.ab == "causal" {
				tri := make([]float64, seq*seq)
				for i := 0; i < seq; i++ {
					for j := i + 1; j < seq; j++ {
						tri[i*seq+j] = math.Inf(-1)
					}
				}
				for len(ins) < 5 {
					ins = append(ins, "")
				}
				ins = append(ins, b.Const(graph.Float32, []int64{1, 1, seq, seq}, tri...))
			}
			attrs := append([]*onnxpb.AttributeProto{testgraph.Int("num_heads", heads)}, c.attrs...)
			b.Output(b.NodeN("Attention", "com.microsoft", ins, 1, attrs...)[0])
			return b.Model()
		}
		t.Run(c.name, func(t *testing.T) {
			res := FindSites(build().Graph)
			if !strings.HasPrefix(c.want, "lifted:") {
				if len(res.Sites) != 0 || len(res.Rejected) != 1 || res.Rejected[0].Code != c.code || !strings.Contains(res.Rejected[0].Reason, c.want) {
					t.Fatalf("%d sites, rejections %+v; want the refusal %q, code %s", len(res.Sites), res.Rejected, c.want, c.code)
				}
				return
			}
			if len(res.Sites) != 1 || res.Sites[0].Variant != c.want {
				t.Fatalf("%d sites %+v, rejected %+v; want one %s", len(res.Sites), res.Sites, res.Rejected, c.want)
			}
			for _, target := range []string{"attnopt", "ort"} {
				orig, m := build(), build()
				rc, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatalf("%s: %v", target, err)
				}
				if rc.FusedCount() != 1 {
					t.Fatalf("%s did not fuse: %s", target, rc.Actions[0].Reason)
				}
				compareModels(t, orig, m, 3)
			}
		})
	}
}
