package passes

import (
	"math"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
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
		reason  string // for rejected candidates
	}{
		{"rank4 matmul scale-div", with(func(o *O) { o.Scale = "div" }), 1, MaskNone, false, s8, 4, true, "MatMul/kt/scale-scores", ""},
		{"rank4 scale-mul", with(func(o *O) { o.Scale = "mul" }), 1, MaskNone, false, s8, 4, true, "", ""},
		{"scale on q", with(func(o *O) { o.Scale = "q" }), 1, MaskNone, false, s8, 4, true, "scale-q", ""},
		{"sqrt scale on q and k", with(func(o *O) { o.Scale = "qk" }), 1, MaskNone, false, s8, 4, true, "scale-q_and_k", ""},
		{"scale from shape", with(func(o *O) { o.Scale = "shape" }), 1, MaskNone, false, s8, 4, true, "", ""},
		{"no scale", base, 1, MaskNone, false, 1, 4, true, "scale-none", ""},
		{"pre-transposed K", with(func(o *O) { o.KForm = "pre" }), 1, MaskNone, false, 1, 4, true, "", ""},
		{"rank3 bmm", with(func(o *O) { o.Rank = 3; o.Scale = "mul" }), 1, MaskNone, false, s8, 1, true, "", ""},
		{"rank2", with(func(o *O) { o.Rank = 2 }), 1, MaskNone, false, 1, 1, true, "", ""},
		{"einsum kt", with(func(o *O) { o.Op = "Einsum" }), 1, MaskNone, false, 1, 4, true, "Einsum/kt", ""},
		{"einsum natural K", with(func(o *O) { o.Op = "Einsum"; o.KForm = "einsum-natural" }), 1, MaskNone, false, 1, 4, false, "Einsum/scale", ""},
		{"additive mask", with(func(o *O) { o.Mask = "add"; o.Scale = "div" }), 1, MaskAdditive, false, s8, 4, true, "mask-add", ""},
		{"bool where", with(func(o *O) { o.Mask = "where" }), 1, MaskBool, false, 1, 4, true, "mask-where", ""},
		{"bool where inverted", with(func(o *O) { o.Mask = "where_inv" }), 1, MaskBool, false, 1, 4, true, "mask-where", ""},
		{"add of where", with(func(o *O) { o.Mask = "add_where" }), 1, MaskBool, false, 1, 4, true, "mask-add_where", ""},
		{"finite fill", with(func(o *O) { o.Mask = "where_finite" }), 1, MaskAdditive, false, 1, 4, true, "mask-where", ""},
		{"bloom head view", with(func(o *O) { o.Rank = 3; o.Mask = "head_view_alibi"; o.Scale = "mul" }), 1, MaskAdditive, false, s8, 1, true, "scale-scores/mask-where", ""},
		{"swin window view", with(func(o *O) { o.Mask = "window_view"; o.Scale = "q" }), 1, MaskAdditive, false, s8, 4, true, "mask-add", ""},
		{"causal tril", with(func(o *O) { o.Mask = "causal"; o.NK = 20 }), 1, MaskNone, true, 1, 4, true, "causal", ""},
		{"fp16 casts", with(func(o *O) { o.DType = graph.Float16; o.Casts = true; o.Scale = "div" }), 1, MaskNone, false, s8, 4, true, "cast-f32", ""},
		{"dropout", with(func(o *O) { o.Dropout = true }), 1, MaskNone, false, 1, 4, true, "", ""},
		{"dv differs", with(func(o *O) { o.DV = 64 }), 1, MaskNone, false, 1, 4, true, "", ""},
		{"opset 11 axis 3", with(func(o *O) { o.Opset = 11; o.SoftmaxAxis = 3 }), 1, MaskNone, false, 1, 4, true, "", ""},
		{"per-head scale const", with(func(o *O) { o.HeadScale = "const" }), 1, MaskNone, false, 1, 4, true, "scale-per_head", ""},
		{"per-head scale computed", with(func(o *O) { o.HeadScale = "computed"; o.Mask = "add" }), 1, MaskAdditive, false, 1, 4, true, "scale-per_head/mask-add", ""},
		{"per-batch divisor and scalar", with(func(o *O) { o.HeadScale = "div_batch"; o.Scale = "q" }), 1, MaskNone, false, s8, 4, true, "per_head", ""},
		{"causal trilu (torchscript sdpa)", with(func(o *O) { o.Mask = "causal_trilu"; o.Scale = "mul" }), 1, MaskNone, true, s8, 4, true, "causal", ""},
		{"causal constant + padding", with(func(o *O) { o.Mask = "causal_const_pad" }), 1, MaskAdditive, true, 1, 4, true, "mask-add/causal", ""},
		{"causal constant with cache", with(func(o *O) { o.Mask = "causal_const_pad"; o.NK = 24 }), 1, MaskAdditive, true, 1, 4, true, "causal", ""},
		{"causal range and padding", with(func(o *O) { o.Mask = "causal_range_pad" }), 1, MaskBool, true, 1, 4, true, "causal", ""},
		{"causal triu of -inf", with(func(o *O) { o.Mask = "causal_triu_inf" }), 1, MaskNone, true, 1, 4, true, "causal", ""},
		{"causal min with padding", with(func(o *O) { o.Mask = "causal_min_pad" }), 1, MaskBool, true, 1, 4, true, "causal", ""},
		{"shifted triangle stays a mask", with(func(o *O) { o.Mask = "causal_shifted" }), 1, MaskBool, false, 1, 4, true, "mask-add_where", ""},
		{"gqa expand", with(func(o *O) { o.Repeat = "expand"; o.KVHeads = 2; o.Mask = "causal_trilu" }), 1, MaskNone, true, 1, 4, false, "causal/gqa", ""},
		{"gqa tile", with(func(o *O) { o.Repeat = "tile"; o.KVHeads = 1 }), 1, MaskNone, false, 1, 4, false, "gqa", ""},
		{"gqa gather", with(func(o *O) { o.Repeat = "gather"; o.KVHeads = 2 }), 1, MaskNone, false, 1, 4, false, "gqa", ""},
		{"gqa dynamo 3-d view", with(func(o *O) { o.Repeat = "expand_3d"; o.KVHeads = 2 }), 1, MaskNone, false, 1, 4, false, "gqa", ""},
		{"mqa expand of one head", with(func(o *O) { o.Repeat = "expand_one"; o.KVHeads = 1; o.Mask = "causal_trilu" }), 1, MaskNone, true, 1, 4, false, "causal/gqa", ""},
		{"gqa fp16, V cast to float32 after the repeat", with(func(o *O) {
			o.Repeat = "expand"
			o.KVHeads = 2
			o.DType = graph.Float16
			o.Casts = true
			o.FloatPV = true
		}), 1, MaskNone, false, 1, 4, false, "gqa/cast-f32", ""},
		{"dynamo Kt view", with(func(o *O) { o.KForm = "view3d" }), 1, MaskNone, false, 1, 4, false, "MatMul/scale", ""},
		// Negative cases.
		{"opset 11 default axis", with(func(o *O) { o.Opset = 11 }), 0, "", false, 0, 0, false, "", "normalises the flattened dims 1..3"},
		{"softmax over queries", with(func(o *O) { o.SoftmaxAxis = 2 }), 0, "", false, 0, 0, false, "", "not the key (last) axis"},
		{"per-head scale of masked scores", with(func(o *O) { o.HeadScale = "after_mask"; o.Mask = "add" }), 0, "", false, 0, 0, false, "", "scales masked scores"},
		{"bloom view not undone before P·V", with(func(o *O) { o.Rank = 3; o.B = 1; o.Mask = "head_view_open" }), 0, "", false, 0, 0, false, "", "still in the (B, H, …) view"},
		{"scores used elsewhere", with(func(o *O) { o.ScoresOut = true }), 0, "", false, 0, 0, false, "", "graph output"},
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
				if len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0].Reason, tc.reason) {
					t.Fatalf("rejections %v, want one mentioning %q", res.Rejected, tc.reason)
				}
				return
			}
			s := res.Sites[0]
			if s.Mask != tc.mask || s.Causal != tc.causal {
				t.Errorf("mask %s causal %v, want %s %v", s.Mask, s.Causal, tc.mask, tc.causal)
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
	if r := res.Rejected[0]; !strings.Contains(r.Reason, "graph output") && !strings.Contains(r.Reason, "not a product with V") {
		t.Fatalf("reason %q", r.Reason)
	}
}
