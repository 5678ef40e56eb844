package validate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// reducedCases are sites whose lengths live in more tensors than the
// inputs: dynamo's SDPA decomposition folds Kᵀ's reshape to a constant
// [1, H, d, Nk] (sdpa_*_dynamo, and the NCHW spatial attention of a
// diffusers UNet2DModel, where H·W is the length), a causal bias constant
// (sdpa_causal_dynamo), baddbmm's zero constant (diffusers_*_dynamo), a
// relative position bias (monai_swinunetr_dynamo).
func reducedCases(t *testing.T) map[string]*graph.Model {
	out := map[string]*graph.Model{"spatial 16x16, 8 heads": testgraph.SpatialSelfAttention(64, 16, 16, 8, false).Model()}
	for _, name := range []string{"sdpa_causal_dynamo", "sdpa_h16d4_dynamo", "diffusers_vae_dynamo", "diffusers_unet_dynamo", "monai_swinunetr_dynamo"} {
		m, err := graph.Load(filepath.Join("..", "testdata", "models", name, "model.onnx"))
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		out[name] = m
	}
	return out
}

// With a 1 KiB score limit every site runs at a reduced length (16
// tokens), shape-consistently: the rewrite PASSes within 1e-4 in the Go
// runtime and in ONNX Runtime with the custom ops, each check saying it
// ran reduced; the same rewrite with its scale doubled still FAILs there.
func TestReducedLengthCutsEveryTensor(t *testing.T) {
	runners := []validate.Runner{validate.GoRunner{}}
	if r, customOK := ortRunner(t); r != nil && customOK {
		runners = append(runners, r)
	}
	t.Logf("%d runtime(s)", len(runners))
	for name, m := range reducedCases(t) {
		data, _ := m.Marshal()
		orig, _ := graph.LoadBytes(data, "")
		rew, _ := graph.LoadBytes(data, "")
		if _, err := passes.Rewrite(rew, passes.Options{Target: "attnopt"}); err != nil {
			t.Fatal(err)
		}
		out, _ := rew.Marshal()
		bad, _ := graph.LoadBytes(out, "")
		corrupt(bad, "double-scale")
		for _, r := range runners {
			opts := validate.Options{Seed: 1, MaxScoreBytes: 1024}
			rep := validate.Validate(orig, rew, r, opts)
			if rep.Verdict != validate.Pass || len(rep.Checks) == 0 {
				t.Errorf("%s, %s: %s", name, r.Name(), rep.Verdict)
			}
			reduced := 0
			for _, c := range rep.Checks {
				if strings.HasPrefix(c.Reduced, "run at reduced length") {
					reduced++
				}
				for _, o := range c.Outputs {
					if !o.Pass || o.MaxAbs > 1e-4 {
						t.Errorf("%s, %s, %s: %s max abs %g", name, r.Name(), c.Name, o.Output, o.MaxAbs)
					}
				}
				if c.Error != "" {
					t.Errorf("%s, %s, %s: %s", name, r.Name(), c.Name, c.Error)
				}
			}
			if reduced == 0 {
				t.Errorf("%s, %s: no site ran reduced", name, r.Name())
			}
			if rep := validate.Validate(orig, bad, r, opts); rep.Verdict != validate.Fail {
				t.Errorf("%s, %s, scale doubled: %s, want FAIL", name, r.Name(), rep.Verdict)
			}
		}
	}
}

// A site whose length is folded into a shape constant the cut cannot
// reach (K through a flat [H·N·d] reshape) runs at full size when its
// tensors fit, and is CANNOT CHECK, naming why, when they do not (128x128,
// 8 heads: 8 GiB of scores): the checker's limit, never a FAIL.
func TestUncuttableSiteRunsWholeOrCannotCheck(t *testing.T) {
	cases := []struct {
		name     string
		side     int
		verdict  validate.Verdict
		reduced  string // the check's note
		errorHas string
	}{
		{"16x16 runs at full size", 16, validate.Pass, "run at full size (2.0 MiB of scores): original: cannot run the site at reduced length: node", ""},
		{"128x128 is over the limit", 128, validate.CannotCheck, "", "over the 2.0 GiB validation limit"},
	}
	for _, c := range cases {
		orig, rew := rewrite(t, testgraph.SpatialSelfAttention(64, c.side, c.side, 8, true), "attnopt")
		rep := validate.Validate(orig, rew, validate.GoRunner{}, validate.Options{Seed: 1, MaxScoreBytes: 1024})
		if rep.Verdict != c.verdict || len(rep.Checks) != 1 {
			t.Fatalf("%s: %s, want %s: %+v", c.name, rep.Verdict, c.verdict, rep.Checks)
		}
		ch := rep.Checks[0]
		if !strings.HasPrefix(ch.Reduced, c.reduced) || !strings.Contains(ch.Error, c.errorHas) || (c.errorHas == "") != (ch.Error == "") {
			t.Errorf("%s: reduced %q, error %q", c.name, ch.Reduced, ch.Error)
		}
		for _, o := range ch.Outputs {
			if !o.Pass || o.MaxAbs > 1e-4 {
				t.Errorf("%s: %s max abs %g", c.name, o.Output, o.MaxAbs)
			}
		}
		if c.verdict == validate.Pass && len(ch.Outputs) != 1 {
			t.Errorf("%s: %d outputs compared", c.name, len(ch.Outputs))
		}
	}
}
