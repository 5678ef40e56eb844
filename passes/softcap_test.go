package passes_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/validate"
)

// TestSoftcapTargets: a softcapped site (Gemma 2's c·tanh(s/c) before the
// mask, passes/match/softcap.go) in each form, rewritten for every target:
// fused where the target's op caps before the mask as the source does,
// refused with CodeTarget where it cannot, and the rewrite's numbers equal
// the original's in the Go runtime and, when it is found, ONNX Runtime
// (with the custom-op library for attnopt). The attnopt rewrite of each
// form is a golden.
func TestSoftcapTargets(t *testing.T) {
	base := O{B: 2, H: 4, N: 16, D: 8, Opset: 23, Softcap: "div", Scale: "mul"}
	with := func(f func(*O)) O { o := base; f(&o); return o }
	s8 := 1 / math.Sqrt(8)
	// fused lists the targets that fuse the form; the others refuse it.
	cases := []struct {
		name  string
		opts  O
		c     float64
		scale float64
		fused map[string]bool
	}{
		{"gemma2_causal", with(func(o *O) { o.Mask = "causal_trilu"; o.Repeat, o.KVHeads = "expand", 2 }), 0.5, s8,
			map[string]bool{"attnopt": true, "gqa": true}},
		{"mul_inv_additive", with(func(o *O) { o.Softcap, o.Mask, o.SoftcapC = "mul_inv", "add", 2 }), 2, s8,
			map[string]bool{"attnopt": true}},
		{"unmasked", with(func(o *O) { o.Scale = "div" }), 0.5, s8,
			map[string]bool{"attnopt": true, "onnx": true}},
		{"fp16_cast_tanh", with(func(o *O) {
			o.Softcap, o.DType, o.Mask = "cast", graph.Float16, "causal_trilu"
		}), 0.5, s8, map[string]bool{"attnopt": true, "gqa": true}},
		{"bool_where", with(func(o *O) { o.Mask, o.Scale = "where", "q" }), 0.5, s8,
			map[string]bool{"attnopt": true}},
	}
	runners, ortOK, customOK := testRunners(t)
	t.Logf("ONNX Runtime checked: %v, custom ops: %v", ortOK, customOK)
	for _, tc := range cases {
		orig := testgraph.Attention(tc.opts).Model()
		res := FindSites(orig.Graph)
		if len(res.Sites) != 1 {
			t.Fatalf("%s: %d sites (%v), want 1", tc.name, len(res.Sites), res.Rejected)
		}
		s := res.Sites[0]
		if s.Softcap != tc.c || math.Abs(s.Scale-tc.scale) > 1e-3*tc.scale {
			t.Errorf("%s: softcap %g scale %g, want %g and %g", tc.name, s.Softcap, s.Scale, tc.c, tc.scale)
		}
		ins, err := validate.RandomInputs(orig, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eval.Run(orig, ins, eval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range TargetNames() {
			t.Run(tc.name+"/"+target, func(t *testing.T) {
				m := testgraph.Attention(tc.opts).Model()
				c, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				a := c.Actions[0]
				if !tc.fused[target] {
					if a.Fused || a.Reject == nil || a.Reject.Code != match.CodeTarget {
						t.Fatalf("fused %v, reject %v; want a refusal with code %s", a.Fused, a.Reject, match.CodeTarget)
					}
					return
				}
				if !a.Fused {
					t.Fatalf("not fused: %s", a.Reason)
				}
				golden := ""
				if target == "attnopt" {
					golden = filepath.Join("..", "testdata", "golden", "softcap_"+tc.name+"_attnopt.txt")
				}
				tol := max(validate.Tolerance(tc.opts.DType), validate.Tolerance(graph.Float32))
				checkRewriteNumbers(t, m, target, golden, ins, want, tol, runners, customOK)
			})
		}
	}
}

// TestSoftcapFixtures: the Gemma 2 exports (testdata/export/export_softcap.py)
// match as softcapped causal sites, the first layer's with its sliding
// window (dynamo's one bool mask of band, causal and padding included), and their attnopt rewrite (a golden) gives
// the stored PyTorch outputs in the Go runtime and, when found, ONNX Runtime.
func TestSoftcapFixtures(t *testing.T) {
	runners, _, customOK := testRunners(t)
	for name, window := range map[string]int64{"hf_gemma2_softcap": 4, "hf_gemma2_softcap_dynamo": 4} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "models", name)
			m, err := graph.Load(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			res := FindSites(m.Graph)
			if len(res.Sites) != 2 {
				t.Fatalf("%d sites, want 2", len(res.Sites))
			}
			for i, s := range res.Sites {
				if s.Softcap != 0.5 || !s.Causal || (i == 0 && s.SlidingWindow != window) {
					t.Errorf("site %d: softcap %g causal %v window %d; want 0.5, causal, window %d on the first", i, s.Softcap, s.Causal, s.SlidingWindow, window)
				}
			}
			rew, _ := graph.Load(filepath.Join(dir, "model.onnx"))
			c, err := Rewrite(rew, Options{Target: "attnopt", VerifyEach: true})
			if err != nil {
				t.Fatal(err)
			}
			if c.FusedCount() != 2 {
				t.Fatalf("fused %d of 2", c.FusedCount())
			}
			checkGolden(t, filepath.Join("..", "testdata", "golden", name+"_attnopt.txt"), rew.Dump())
			data, _ := rew.Marshal()
			if rew, err = graph.LoadBytes(data, ""); err != nil {
				t.Fatal(err)
			}
			ins, want := loadDataSet(t, m, filepath.Join(dir, "test_data_set_0"))
			checkStoredOutputs(t, m, rew, ins, want, runners, !customOK)
		})
	}
}
