package passes_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// narrowTargets express only some sites (GroupQueryAttention: plain causal
// prompts); they may refuse a site, with its reason. The others take all.
var narrowTargets = map[string]bool{"gqa": true}

// rewriteCases are builder-made graphs in the styles exporters write.
func rewriteCases() map[string]*testgraph.B {
	base := O{B: 2, H: 4, N: 16, D: 8}
	with := func(f func(*O)) *testgraph.B { o := base; f(&o); return testgraph.Attention(o) }
	return map[string]*testgraph.B{
		"sagan":             testgraph.SAGAN(17, 16, 4, 4),
		"hf_dynamic":        testgraph.HFSelfAttention(17, "batch", "seq", 32, 4),
		"sdpa_bool_op23":    testgraph.SDPABoolMask(23, graph.Float32, 1, 4, 16, 4),
		"sdpa_fp16":         testgraph.SDPABoolMask(17, graph.Float16, 1, 16, 32, 4),
		"cpa3d":             testgraph.CPA3D(17, 2, 4, 4, 32, 4),
		"causal_gpt2":       with(func(o *O) { o.Mask = "causal"; o.Scale = "div"; o.Opset = 23 }),
		"finite_fill":       with(func(o *O) { o.Mask = "where_finite"; o.Opset = 23 }),
		"inverted_where":    with(func(o *O) { o.Mask = "where_inv"; o.Scale = "qk"; o.Opset = 23 }),
		"fp16_casts":        with(func(o *O) { o.DType = graph.Float16; o.Casts = true; o.Scale = "div"; o.Mask = "add" }),
		"bloom_view":        with(func(o *O) { o.Rank = 3; o.Mask = "head_view_alibi"; o.Scale = "mul"; o.Opset = 23 }),
		"bloom_view_bool":   with(func(o *O) { o.Rank = 3; o.Mask = "head_view"; o.Opset = 23 }),
		"bloom_view_plane":  with(func(o *O) { o.Rank = 3; o.Mask = "head_view_plane"; o.Opset = 23 }),
		"swin_view":         with(func(o *O) { o.Mask = "window_view"; o.Scale = "q"; o.Opset = 23 }),
		"einsum":            with(func(o *O) { o.Op = "Einsum"; o.KForm = "einsum-natural"; o.Scale = "shape"; o.Opset = 23 }),
		"einsum_bnhd":       with(func(o *O) { o.KForm = "bnhd"; o.Scale = "q"; o.Mask = "where"; o.Opset = 23 }),
		"keras_blend":       with(func(o *O) { o.Mask = "blend"; o.Scale = "mul"; o.Opset = 23 }),
		"jax_renorm":        with(func(o *O) { o.Mask = "renorm"; o.Scale = "mul"; o.Opset = 23 }),
		"plane_pad":         with(func(o *O) { o.Mask = "plane_pad"; o.Opset = 23 }),
		"funnel_sub_inf":    with(func(o *O) { o.Mask = "sub_inf"; o.Scale = "mul"; o.Opset = 23 }),
		"megatron_blend":    with(func(o *O) { o.Mask = "sub_blend"; o.Scale = "div"; o.Opset = 23 }),
		"rank2_dv":          with(func(o *O) { o.Rank = 2; o.DV = 24; o.Opset = 23 }),
		"rank3_mask":        with(func(o *O) { o.Rank = 3; o.Mask = "add"; o.Opset = 23 }),
		"pre_transposed":    with(func(o *O) { o.KForm = "pre"; o.Dropout = true }),
		"causal_trilu":      with(func(o *O) { o.Mask = "causal_trilu"; o.Opset = 23 }),
		"causal_const_pad":  with(func(o *O) { o.Mask = "causal_const_pad"; o.Opset = 23 }),
		"causal_range_pad":  with(func(o *O) { o.Mask = "causal_range_pad"; o.Opset = 23 }),
		"causal_min_pad":    with(func(o *O) { o.Mask = "causal_min_pad" }),
		"causal_shifted":    with(func(o *O) { o.Mask = "causal_shifted"; o.Opset = 23 }),
		"causal_cast_where": with(func(o *O) { o.Mask = "causal_cast_where" }),
		"causal_band_pad":   with(func(o *O) { o.Mask = "causal_band_pad"; o.Opset = 23 }),
		"causal_fp16_pad":   with(func(o *O) { o.Mask = "causal_fp16_pad"; o.DType = graph.Float16 }),
		"alibi_const_pad":   with(func(o *O) { o.Mask = "alibi_const_pad"; o.Opset = 23 }),
		"alibi_row_pad":     with(func(o *O) { o.Mask = "alibi_row_pad" }),
		"gqa_expand":        with(func(o *O) { o.Repeat = "expand"; o.KVHeads = 2; o.Mask = "causal_trilu"; o.Opset = 23 }),
		"gqa_dynamo_view":   with(func(o *O) { o.Repeat = "expand_3d"; o.KVHeads = 1; o.Opset = 23 }),
		"mqa_expand":        with(func(o *O) { o.Repeat = "expand_one"; o.KVHeads = 1; o.Mask = "causal_trilu"; o.Opset = 23 }),
		"gqa_fp16_cast_v": with(func(o *O) {
			o.Repeat, o.KVHeads, o.DType, o.Casts, o.FloatPV, o.Scale = "expand", 2, graph.Float16, true, true, "qk"
		}),
		"k_view3d":      with(func(o *O) { o.KForm = "view3d"; o.Scale = "div"; o.Opset = 23 }),
		"head_scale":    with(func(o *O) { o.HeadScale = "computed"; o.Mask = "add"; o.Opset = 23 }),
		"batch_divisor": with(func(o *O) { o.HeadScale = "div_batch"; o.Scale = "div" }),
	}
}

// TestRewriteGoldenAndNumbers rewrites every case for every target that
// applies, checks the graph dump against testdata/golden, and runs the
// original and the rewrite in the Go runtime on seeded inputs.
func TestRewriteGoldenAndNumbers(t *testing.T) {
	for name, b := range rewriteCases() {
		for _, target := range TargetNames() {
			t.Run(name+"/"+target, func(t *testing.T) {
				orig := b.Model()
				m := b.Model()
				c, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if target == "onnx" && orig.Opset("") < 23 {
					if _, ok := err.(*ModelError); !ok {
						t.Fatalf("onnx target on opset %d: err %v, want a ModelError", orig.Opset(""), err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				sites := len(FindSites(orig.Graph).Sites)
				if narrowTargets[target] && c.FusedCount() == 0 {
					for _, a := range c.Actions {
						if a.Reason == "" {
							t.Fatalf("site %d refused without a reason", a.Site.ID)
						}
					}
					t.Skipf("refused by the %s target: %s", target, c.Actions[0].Reason)
				}
				if c.FusedCount() != sites || sites == 0 {
					for _, a := range c.Actions {
						t.Log(a.Reason)
					}
					t.Fatalf("fused %d of %d sites", c.FusedCount(), sites)
				}
				// What remains is the target's own op where its runtime still
				// materialises the scores (ONNX Attention; MultiHeadAttention
				// with a bias or unidirectional), lifted as a site: memory
				// truth, not a miss.
				for _, s := range FindSites(m.Graph).Sites {
					if s.Lifted == nil || s.Lifted.Domain+"."+s.Lifted.OpType != strings.TrimPrefix(c.Target.Op(), "ai.onnx") || (target == "ort" && s.Mask() == MaskNone && !s.Causal) {
						t.Fatalf("site %s (%s) remains after the rewrite", s.Softmax.Label(), s.Variant)
					}
				}
				checkGolden(t, filepath.Join("..", "testdata", "golden", name+"_"+target+".txt"), m.Dump())
				data, err := m.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				reloaded, err := graph.LoadBytes(data, "")
				if err != nil {
					t.Fatalf("rewritten model does not reload: %v", err)
				}
				compareModels(t, orig, reloaded, 1)
			})
		}
	}
}

// With more keys than queries (a KV cache) a causal mask aligned
// bottom-right becomes `causal` on attnopt.FlashAttention, whose alignment
// that is; one aligned top-left stays a mask. The numbers must agree.
func TestCausalWithCacheNumbers(t *testing.T) {
	for mask, causal := range map[string]bool{"causal_const_pad": true, "causal_min_pad": false} {
		t.Run(mask, func(t *testing.T) {
			b := testgraph.Attention(O{B: 2, H: 4, N: 16, NK: 24, D: 8, Mask: mask})
			orig, m := b.Model(), b.Model()
			c, err := Rewrite(m, Options{Target: "attnopt", VerifyEach: true})
			if err != nil {
				t.Fatal(err)
			}
			if c.FusedCount() != 1 || c.Actions[0].Site.Causal != causal {
				t.Fatalf("fused %d, causal %v, want %v", c.FusedCount(), c.Actions[0].Site.Causal, causal)
			}
			compareModels(t, orig, m, 3)
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./passes -update)", err)
	}
	if string(want) != got {
		t.Errorf("graph differs from %s (run go test ./passes -update and review the diff):\n%s", path, got)
	}
}

// compareModels runs both models in the Go runtime and checks every output
// against the dtype's tolerance.
func compareModels(t *testing.T, a, b *graph.Model, seed int64) {
	t.Helper()
	ins, err := validate.RandomInputs(a, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	compareOn(t, a, b, ins)
}

// compareOn runs a and b in the Go runtime on ins and compares every output.
func compareOn(t *testing.T, a, b *graph.Model, ins map[string]*eval.Tensor) {
	t.Helper()
	want, err := eval.Run(a, ins, eval.Options{})
	if err != nil {
		t.Fatalf("original: %v", err)
	}
	got, err := eval.Run(b, ins, eval.Options{})
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	for _, o := range a.Graph.Outputs {
		// A float32 output computed from fp16 inputs carries fp16 error
		// (as validate/validate.go's precision judges it).
		tol := validate.Tolerance(o.Type.DType)
		for _, in := range a.Graph.Inputs {
			tol = max(tol, validate.Tolerance(in.Type.DType))
		}
		m, err := validate.Compare(o.Name, want[o.Name], got[o.Name], tol, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Pass {
			t.Errorf("output %s: max abs %.3g at %v (tolerance %.g), %d non-finite", o.Name, m.MaxAbs, m.WorstIndex, tol, m.NaNs)
		}
	}
}
