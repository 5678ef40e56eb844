package validate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

func rewrite(t *testing.T, b *testgraph.B, target string) (*graph.Model, *graph.Model) {
	t.Helper()
	orig, m := b.Model(), b.Model()
	if _, err := passes.Rewrite(m, passes.Options{Target: target}); err != nil {
		t.Fatal(err)
	}
	return orig, m
}

// corrupt applies a deliberate bug to the fused node of a rewrite.
func corrupt(m *graph.Model, how string) {
	for _, n := range m.Graph.Nodes {
		if n.Domain != "attnopt" && n.Domain != "com.microsoft" && !n.Is("Attention") {
			continue
		}
		switch how {
		case "swap-kv":
			k, v := n.Input(1), n.Input(2)
			n.SetInput(1, v)
			n.SetInput(2, k)
		case "double-scale":
			n.SetAttr(graph.FloatAttr("scale", 2*n.AttrFloat("scale", 1)))
		}
	}
}

// A validator that cannot fail is worthless: every target's rewrite passes,
// and the same rewrite with K and V swapped or the scale doubled fails.
func TestValidatorCatchesCorruptedRewrites(t *testing.T) {
	b := testgraph.Attention(testgraph.Opts{B: 2, H: 4, N: 16, D: 8, Scale: "div", Mask: "add", Opset: 23})
	for _, target := range []string{"attnopt", "ort", "onnx"} {
		for _, scope := range []string{"sites", "model"} {
			for _, how := range []string{"", "swap-kv", "double-scale"} {
				orig, rew := rewrite(t, b, target)
				corrupt(rew, how)
				runners := []validate.Runner{validate.GoRunner{}}
				if r, customOK := ortRunner(t); r != nil && (target != "attnopt" || customOK) {
					runners = append(runners, r)
				}
				for _, r := range runners {
					rep := validate.Validate(orig, rew, r, validate.Options{Scope: scope, Seed: 3})
					if want := how == ""; rep.Pass != want {
						t.Errorf("%s/%s/%s/%q: pass=%v, want %v: %+v", r.Name(), target, scope, how, rep.Pass, want, rep.Checks)
					}
					if len(rep.Checks) == 0 {
						t.Errorf("%s/%s: no checks ran", target, scope)
					}
				}
			}
		}
	}
}

// The seed CPA3D at its full size (2,097,152 tokens) validates in site scope
// at a reduced length, and says so.
func TestCPA3DFullSizeValidatesAtReducedLength(t *testing.T) {
	orig, rew := rewrite(t, testgraph.CPA3D(17, 128, 128, 128, 128, 4), "attnopt")
	start := time.Now()
	rep := validate.Validate(orig, rew, validate.GoRunner{}, validate.Options{Seed: 1})
	if !rep.Pass || len(rep.Checks) != 1 {
		t.Fatalf("report %+v", rep.Checks)
	}
	c := rep.Checks[0]
	if !strings.Contains(c.Reduced, "q_len 2097152 → ") || !strings.Contains(c.Reduced, "64.0 TiB") {
		t.Fatalf("reduced note %q", c.Reduced)
	}
	t.Logf("%s in %v", c.Reduced, time.Since(start))
}
