package validate_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

func approxRewrite(t *testing.T, load func() *graph.Model, target string, a passes.ApproxOptions) (*graph.Model, *graph.Model, *passes.Context) {
	t.Helper()
	orig, m := load(), load()
	c, err := passes.Rewrite(m, passes.Options{Target: target, VerifyEach: true, Approx: a})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := m.Marshal()
	rew, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return orig, rew, c
}

func modelError(t *testing.T, orig, rew *graph.Model, r validate.Runner) float64 {
	t.Helper()
	rep := validate.Validate(orig, rew, r, validate.Options{Scope: "model", Seed: 5})
	worst := 0.0
	for _, c := range rep.Checks {
		if c.Error != "" {
			t.Fatalf("%s: %s", r.Name(), c.Error)
		}
		for _, m := range c.Outputs {
			if m.NaNs > 0 || math.IsNaN(m.MaxAbs) {
				t.Fatalf("%s: output %s has NaN/Inf", r.Name(), m.Output)
			}
			worst = math.Max(worst, m.MaxAbs)
		}
	}
	return worst
}

// With a window equal to the whole grid, WindowAttention is exact attention.
func TestWindowOverWholeGridIsExact(t *testing.T) {
	cases := map[string]struct {
		b    *testgraph.B
		a    passes.ApproxOptions
		cell int
	}{
		"sagan 8x8":           {testgraph.SAGAN(17, 16, 8, 8), passes.ApproxOptions{Window: []int64{8, 8}}, 64},
		"sagan shifted":       {testgraph.SAGAN(17, 16, 8, 8), passes.ApproxOptions{Window: []int64{8, 8}, Shift: []int64{3, 5}}, 64},
		"cpa3d 4x4x4":         {testgraph.CPA3D(17, 4, 4, 4, 32, 4), passes.ApproxOptions{Window: []int64{4}}, 64},
		"cpa3d larger window": {testgraph.CPA3D(17, 2, 4, 4, 32, 4), passes.ApproxOptions{Window: []int64{16, 16, 16}}, 32},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			orig, rew, c := approxRewrite(t, tc.b.Model, "attnopt", tc.a)
			if c.Actions[0].Plan.Kind != "window" {
				t.Fatalf("plan %s (%s)", c.Actions[0].Plan, c.Actions[0].Plan.Reason)
			}
			if err := modelError(t, orig, rew, validate.GoRunner{}); err > 1e-5 {
				t.Fatalf("window = grid differs from exact attention by %.3g", err)
			}
		})
	}
}

// Error grows as windows shrink and strides grow (SAGAN at 32×32).
func TestApproximationErrorGrowsWithCoarseness(t *testing.T) {
	b := testgraph.SAGAN(17, 16, 32, 32)
	prev := -1.0
	for _, w := range []int64{32, 16, 8, 4} {
		orig, rew, _ := approxRewrite(t, b.Model, "attnopt", passes.ApproxOptions{Window: []int64{w}})
		err := modelError(t, orig, rew, validate.GoRunner{})
		t.Logf("window %d: max abs error %.3g", w, err)
		if err < prev {
			t.Errorf("window %d: error %.3g below the larger window's %.3g", w, err, prev)
		}
		prev = err
	}
	prev = -1
	for _, st := range []int64{2, 4, 8} {
		orig, rew, _ := approxRewrite(t, b.Model, "attnopt", passes.ApproxOptions{Pool: "kv", Stride: st, Upsample: "nearest"})
		err := modelError(t, orig, rew, validate.GoRunner{})
		t.Logf("pool kv stride %d: max abs error %.3g", st, err)
		if err < prev || err == 0 {
			t.Errorf("stride %d: error %.3g, previous %.3g", st, err, prev)
		}
		prev = err
	}
}

// On the spatial fixtures: windows and both pool modes give models whose
// output shapes are unchanged and that run in the Go runtime, ONNX Runtime
// CPU (pool modes, with stock MultiHeadAttention) and ONNX Runtime with the
// custom-op library (window), and inspect reports the new memory.
func TestApproximationsOnSpatialFixtures(t *testing.T) {
	ortR, customOK := ortRunner(t)
	for _, name := range []string{"sagan", "cpa3d", "progan_mha", "monai_unetr", "diffusers_unet", "diffusers_vae"} {
		path := filepath.Join("..", "testdata", "models", name, "model.onnx")
		load := func() *graph.Model {
			m, err := graph.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		modes := []struct {
			kind   passes.PlanKind
			target string
			a      passes.ApproxOptions
		}{
			{"window", "attnopt", passes.ApproxOptions{Window: []int64{2}}},
			{"pool_kv", "ort", passes.ApproxOptions{Pool: "kv", Stride: 2, Upsample: "nearest"}},
			{"pool_qkv", "ort", passes.ApproxOptions{Pool: "qkv", Stride: 2, Upsample: "linear"}},
		}
		for _, mode := range modes {
			t.Run(name+"/"+string(mode.kind), func(t *testing.T) {
				orig, rew, c := approxRewrite(t, load, mode.target, mode.a)
				approx := 0
				for _, a := range c.Actions {
					if a.Plan.Kind == mode.kind && a.Fused {
						approx++
					} else if a.Fused && a.Plan.Kind == "exact" {
						t.Logf("site %d stays exact: %s", a.Site.ID, a.Plan.Reason)
					}
				}
				if approx == 0 {
					t.Fatalf("no site took %s", mode.kind)
				}
				for i, o := range orig.Graph.Outputs {
					if got := rew.Graph.Outputs[i].Type.String(); got != o.Type.String() {
						t.Errorf("output %s: %s, original %s", o.Name, got, o.Type)
					}
				}
				modelError(t, orig, rew, validate.GoRunner{})
				if ortR != nil && (mode.kind != "window" || customOK) {
					modelError(t, orig, rew, ortR)
				}
				fused := passes.FindSites(rew.Graph).Fused
				described := 0
				for _, n := range fused {
					if d := passes.DescribeFused(n); d != nil && d.FusedBytes >= 0 && d.ScoreBytes > 0 {
						described++
					}
				}
				if mode.kind == "window" && described == 0 {
					t.Errorf("inspect cannot size the rewritten sites")
				}
			})
		}
	}
}
