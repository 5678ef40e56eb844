package passes

import (
	"math"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/match"
)

type O = testgraph.Opts

func TestMatcherVariants(t *testing.T) {
	base := O{B: 2, H: 4, N: 16, D: 8}
	with := func(f func(*O)) O { o := base; f(&o); return o }
	s8 := 1 / math.Sqrt(8)
	cases := []struct {
		name    string
		opts    O
		sites   int
		mask    MaskKind
		causal  bool
		scale   float64
		heads   int64
		kt      bool
		variant string
		code    Code // for rejected candidates: the Reject's code
	}{
		{"rank4 matmul scale-div", with(func(o *O) { o.Scale = "div" }), 1, MaskNone, false, s8, 4, true, "MatMul/kt/scale-scores", 0},
		{"rank4 scale-mul", with(func(o *O) { o.Scale = "mul" }), 1, MaskNone, false, s8, 4, true, "", 0},
		{"scale on q", with(func(o *O) { o.Scale = "q" }), 1, MaskNone, false, s8, 4, true, "scale-q", 0},
		{"sqrt scale on q and k", with(func(o *O) { o.Scale = "qk" }), 1, MaskNone, false, s8, 4, true, "scale-q_and_k", 0},
		{"scale from shape", with(func(o *O) { o.Scale = "shape" }), 1, MaskNone, false, s8, 4, true, "", 0},
		{"no scale", base, 1, MaskNone, false, 1, 4, true, "scale-none", 0},
		{"pre-transposed K", with(func(o *O) { o.KForm = "pre" }), 1, MaskNone, false, 1, 4, true, "", 0},
		{"rank3 bmm", with(func(o *O) { o.Rank = 3; o.Scale = "mul" }), 1, MaskNone, false, s8, 1, true, "", 0},
		{"rank2", with(func(o *O) { o.Rank = 2 }), 1, MaskNone, false, 1, 1, true, "", 0},
		{"einsum kt", with(func(o *O) { o.Op = "Einsum" }), 1, MaskNone, false, 1, 4, true, "Einsum/kt", 0},
		{"einsum natural K", with(func(o *O) { o.Op = "Einsum"; o.KForm = "einsum-natural" }), 1, MaskNone, false, 1, 4, false, "Einsum/scale", 0},
		{"additive mask", with(func(o *O) { o.Mask = "add"; o.Scale = "div" }), 1, MaskAdditive, false, s8, 4, true, "mask-add", 0},
		{"bool where", with(func(o *O) { o.Mask = "where" }), 1, MaskBool, false, 1, 4, true, "mask-where", 0},
		{"bool where inverted", with(func(o *O) { o.Mask = "where_inv" }), 1, MaskBool, false, 1, 4, true, "mask-where", 0},
		{"add of where", with(func(o *O) { o.Mask = "add_where" }), 1, MaskBool, false, 1, 4, true, "mask-add_where", 0},
		// Where(m, s, −1e4) replaces dropped scores: a bool mask whose
		// literal rows add float32's lowest (a row that keeps no key is
		// uniform, as the source's), passes/match/mask.go.
		{"finite fill", with(func(o *O) { o.Mask = "where_finite" }), 1, MaskBool, false, 1, 4, true, "mask-where", 0},
		{"bloom head view", with(func(o *O) { o.Rank = 3; o.Mask = "head_view_alibi"; o.Scale = "mul" }), 1, MaskAdditive, false, s8, 1, true, "scale-scores/mask-where", 0},
		{"swin window view", with(func(o *O) { o.Mask = "window_view"; o.Scale = "q" }), 1, MaskAdditive, false, s8, 4, true, "mask-add", 0},
		{"causal tril", with(func(o *O) { o.Mask = "causal"; o.NK = 20 }), 1, MaskNone, true, 1, 4, true, "causal", 0},
		{"fp16 casts", with(func(o *O) { o.DType = graph.Float16; o.Casts = true; o.Scale = "div" }), 1, MaskNone, false, s8, 4, true, "cast-f32", 0},
		{"dropout", with(func(o *O) { o.Dropout = true }), 1, MaskNone, false, 1, 4, true, "", 0},
		{"dv differs", with(func(o *O) { o.DV = 64 }), 1, MaskNone, false, 1, 4, true, "", 0},
		{"opset 11 axis 3", with(func(o *O) { o.Opset = 11; o.SoftmaxAxis = 3 }), 1, MaskNone, false, 1, 4, true, "", 0},
		{"per-head scale const", with(func(o *O) { o.HeadScale = "const" }), 1, MaskNone, false, 1, 4, true, "scale-per_head", 0},
		{"per-head scale computed", with(func(o *O) { o.HeadScale = "computed"; o.Mask = "add" }), 1, MaskAdditive, false, 1, 4, true, "scale-per_head/mask-add", 0},
		{"per-batch divisor and scalar", with(func(o *O) { o.HeadScale = "div_batch"; o.Scale = "q" }), 1, MaskNone, false, s8, 4, true, "per_head", 0},
		{"causal trilu (torchscript sdpa)", with(func(o *O) { o.Mask = "causal_trilu"; o.Scale = "mul" }), 1, MaskNone, true, s8, 4, true, "causal", 0},
		{"causal constant + padding", with(func(o *O) { o.Mask = "causal_const_pad" }), 1, MaskAdditive, true, 1, 4, true, "mask-add/causal", 0},
		{"causal constant with cache", with(func(o *O) { o.Mask = "causal_const_pad"; o.NK = 24 }), 1, MaskAdditive, true, 1, 4, true, "causal", 0},
		{"causal range and padding", with(func(o *O) { o.Mask = "causal_range_pad" }), 1, MaskBool, true, 1, 4, true, "causal", 0},
		{"causal triu of -inf", with(func(o *O) { o.Mask = "causal_triu_inf" }), 1, MaskNone, true, 1, 4, true, "causal", 0},
		{"causal min with padding", with(func(o *O) { o.Mask = "causal_min_pad" }), 1, MaskBool, true, 1, 4, true, "causal", 0},
		{"shifted triangle stays a mask", with(func(o *O) { o.Mask = "causal_shifted" }), 1, MaskBool, false, 1, 4, true, "mask-add_where", 0},
		{"gqa expand", with(func(o *O) { o.Repeat = "expand"; o.KVHeads = 2; o.Mask = "causal_trilu" }), 1, MaskNone, true, 1, 4, false, "causal/gqa", 0},
		{"gqa tile", with(func(o *O) { o.Repeat = "tile"; o.KVHeads = 1 }), 1, MaskNone, false, 1, 4, false, "gqa", 0},
		{"gqa gather", with(func(o *O) { o.Repeat = "gather"; o.KVHeads = 2 }), 1, MaskNone, false, 1, 4, false, "gqa", 0},
		{"gqa dynamo 3-d view", with(func(o *O) { o.Repeat = "expand_3d"; o.KVHeads = 2 }), 1, MaskNone, false, 1, 4, false, "gqa", 0},
		{"mqa expand of one head", with(func(o *O) { o.Repeat = "expand_one"; o.KVHeads = 1; o.Mask = "causal_trilu" }), 1, MaskNone, true, 1, 4, false, "causal/gqa", 0},
		{"gqa fp16, V cast to float32 after the repeat", with(func(o *O) {
			o.Repeat = "expand"
			o.KVHeads = 2
			o.DType = graph.Float16
			o.Casts = true
			o.FloatPV = true
		}), 1, MaskNone, false, 1, 4, false, "gqa/cast-f32", 0},
		{"dynamo Kt view", with(func(o *O) { o.KForm = "view3d" }), 1, MaskNone, false, 1, 4, false, "MatMul/scale", 0},
		{"softcap div, mul", with(func(o *O) { o.Softcap = "div"; o.Scale = "mul"; o.Mask = "add" }), 1, MaskAdditive, false, s8, 4, true, "softcap-0.5/mask-add", 0},
		{"softcap by 1/c, c first", with(func(o *O) { o.Softcap = "mul_inv"; o.SoftcapC = 50; o.Scale = "q" }), 1, MaskNone, false, s8, 4, true, "softcap-50", 0},
		{"softcap fp16, tanh in float32", with(func(o *O) { o.Softcap = "cast"; o.DType = graph.Float16; o.Mask = "causal_trilu" }), 1, MaskNone, true, 1, 4, true, "softcap-0.5/causal", 0},
		// Negative cases.
		{"softcap of masked scores", with(func(o *O) { o.Softcap = "after_mask"; o.Mask = "add" }), 0, "", false, 0, 0, false, "", match.CodeScoreChain},
		{"scale after the softcap", with(func(o *O) { o.Softcap = "scaled_after" }), 0, "", false, 0, 0, false, "", match.CodeScale},
		{"opset 11 default axis", with(func(o *O) { o.Opset = 11 }), 0, "", false, 0, 0, false, "", match.CodeSoftmaxAxis},
		{"softmax over queries", with(func(o *O) { o.SoftmaxAxis = 2 }), 0, "", false, 0, 0, false, "", match.CodeSoftmaxAxis},
		{"per-head scale of masked scores", with(func(o *O) { o.HeadScale = "after_mask"; o.Mask = "add" }), 0, "", false, 0, 0, false, "", match.CodeScale},
		{"bloom view not undone before P·V", with(func(o *O) { o.Rank = 3; o.B = 1; o.Mask = "head_view_open" }), 0, "", false, 0, 0, false, "", match.CodeView},
		{"scores used elsewhere", with(func(o *O) { o.ScoresOut = true }), 0, "", false, 0, 0, false, "", match.CodeIntermediate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := testgraph.Attention(tc.opts).Model()
			if err := m.Graph.Verify(); err != nil {
				t.Fatal(err)
			}
			res := FindSites(m.Graph)
			if len(res.Sites) != tc.sites {
				for _, r := range res.Rejected {
					t.Log(r)
				}
				t.Fatalf("found %d sites, want %d", len(res.Sites), tc.sites)
			}
			if tc.sites == 0 {
				if len(res.Rejected) != 1 || res.Rejected[0].Code != tc.code {
					t.Fatalf("rejections %v, want one with code %s", res.Rejected, tc.code)
				}
				if r := res.Rejected[0]; r.Node == nil && r.Value == nil {
					t.Errorf("rejection %v names no node or value at fault", r)
				}
				return
			}
			s := res.Sites[0]
			if s.Mask() != tc.mask || s.Causal != tc.causal {
				t.Errorf("mask %s causal %v, want %s %v", s.Mask(), s.Causal, tc.mask, tc.causal)
			}
			if math.Abs(s.Scale-tc.scale) > 1e-6 {
				t.Errorf("scale %v, want %v", s.Scale, tc.scale)
			}
			if h, _ := s.Heads.Value(); h != tc.heads {
				t.Errorf("heads %s, want %d", s.Heads, tc.heads)
			}
			if s.KTransposed != tc.kt {
				t.Errorf("k transposed %v, want %v", s.KTransposed, tc.kt)
			}
			if !strings.Contains(s.Variant, tc.variant) {
				t.Errorf("variant %q, want it to contain %q", s.Variant, tc.variant)
			}
			if s.Q.Name != "q" || (s.V.Name != "v" && tc.opts.KVHeads == 0) || s.Output.Name != "out" {
				t.Errorf("q/v/out = %s/%s/%s", s.Q.Name, s.V.Name, s.Output.Name)
			}
			if tc.opts.KVHeads > 0 {
				if h, _ := s.KVHeads.Value(); h != int64(tc.opts.KVHeads) || s.K.Name != "k" || s.V.Name != "v" {
					t.Errorf("kv_heads %s reading %s/%s, want %d reading k/v", s.KVHeads, s.K.Name, s.V.Name, tc.opts.KVHeads)
				}
			} else if tc.opts.KForm == "pre" || tc.opts.KForm == "einsum-natural" || tc.opts.KForm == "view3d" {
				if s.K.Name != "k" {
					t.Errorf("k = %s, want the input k", s.K.Name)
				}
			}
			if tc.opts.DV != 0 {
				if dv, _ := s.VHeadDim.Value(); dv != int64(tc.opts.DV) {
					t.Errorf("v head dim %s, want %d", s.VHeadDim, tc.opts.DV)
				}
			}
		})
	}
}

func TestClassifierSoftmaxIsExplained(t *testing.T) {
	res := FindSites(testgraph.Classifier().Model().Graph)
	if len(res.Sites) != 0 || len(res.Rejected) != 1 {
		t.Fatalf("sites %d rejected %d", len(res.Sites), len(res.Rejected))
	}
	if r := res.Rejected[0]; r.Code != match.CodeIntermediate && r.Code != match.CodeProduct {
		t.Fatalf("code %s (%q)", r.Code, r.Reason)
	}
}
