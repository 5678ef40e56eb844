package validate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/validate"
)

type fixture struct {
	Name string `json:"name"`
	File string `json:"file"`
}

func fixtures(t testing.TB) []fixture {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "MANIFEST.json"))
	if err != nil {
		t.Skip("testdata/MANIFEST.json not present")
	}
	var man struct {
		Models []fixture `json:"models"`
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	return man.Models
}

// ortRunner returns ONNX Runtime when its library is available (CI unpacks it
// with scripts/setup-ort.sh); customOK says whether attnopt's custom-op
// library is built too.
func ortRunner(t testing.TB) (r *validate.ORTRunner, customOK bool) {
	lib, err := ort.FindLibrary("")
	if err != nil {
		t.Logf("ONNX Runtime checks skipped: %v", err)
		return nil, false
	}
	r, err = validate.NewORTRunner(lib, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ort.CustomOpsLibrary("")
	return r, err == nil
}

// Every site of every fixture is fused for each target that applies, and
// the rewrite agrees with the original end to end: in the Go runtime for
// every target, and in real ONNX Runtime for ort and onnx (and attnopt when
// the custom-op library is built).
func TestFixtureRewritesAgree(t *testing.T) {
	ortR, customOK := ortRunner(t)
	for _, fx := range fixtures(t) {
		for _, target := range passes.TargetNames() {
			t.Run(fx.Name+"/"+target, func(t *testing.T) {
				path := filepath.Join("..", "testdata", fx.File)
				orig, err := graph.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if target == "onnx" && orig.Opset("") < 23 {
					t.Skipf("opset %d model: the onnx target needs 23", orig.Opset(""))
				}
				rew, _ := graph.Load(path)
				c, err := passes.Rewrite(rew, passes.Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range c.Actions {
					// A lifted op already in the target's op is kept.
					// gqa (GroupQueryAttention) takes plain causal sites only.
					if !a.Fused && !a.Kept && !(target == "gqa" && a.Reason != "") && !refusedByDesign(target, a) {
						t.Errorf("site %d (%s) not fused: %s", a.Site.ID, a.Site.Softmax.Label(), a.Reason)
					}
				}
				data, _ := rew.Marshal()
				// External data (extdata_*) stays beside the original.
				rew, err = graph.LoadBytes(data, filepath.Dir(path))
				if err != nil {
					t.Fatal(err)
				}
				runners := []validate.Runner{validate.GoRunner{}}
				// ONNX Runtime before 1.31 gives ONNX Attention-23's rows that
				// see no key the mean of V; the rewrite keeps the spec's zeros
				// (docs/fully-masked-rows.md), so such originals are judged in
				// the Go runtime only there.
				spec := orig.Opset("") >= 23 && hasOp(orig, "Attention") && ortR != nil && versionBefore(ortR.Version(), 1, 31)
				// ONNX Runtime's CPU runs a float16 chain of ops it has no
				// float16 kernel for in float32 (it inserts casts), so a row
				// that sees no key under a finite fill is not the float16
				// literal row the graph specifies and the fused op keeps
				// (fill_round, docs/fully-masked-rows.md): judged in the Go
				// runtime only.
				spec = spec || target == "attnopt" && roundsRows(rew)
				if ortR != nil && (target != "attnopt" || customOK) && !spec {
					runners = append(runners, ortR)
				}
				for _, r := range runners {
					rep := validate.Validate(orig, rew, r, validate.Options{Scope: "model", Seed: 7})
					for _, ch := range rep.Checks {
						if !ch.Pass {
							t.Errorf("%s runtime: %s %+v", r.Name(), ch.Error, ch.Outputs)
						}
					}
				}
			})
		}
	}
}

// refusedByDesign is a refusal the target states for a site it cannot
// express: ort's MultiHeadAttention for a causal site after a KV cache
// (Nq ≠ Nk, Optimum's decoder with past), whose alignment it does not
// verify, and for softcap, which it has no attribute for.
func refusedByDesign(target string, a passes.Action) bool {
	if target != "ort" || a.Reject == nil || a.Reject.Code != match.CodeTarget {
		return false
	}
	// MultiHeadAttention has no softcap.
	return a.Site.Softcap > 0 || a.Site.Causal && !a.Site.QLen.Equal(a.Site.KVLen)
}

// roundsRows reports a fused op whose rows that see no key follow float16
// rounding (fill_round).
func roundsRows(m *graph.Model) bool {
	for _, n := range m.Graph.Nodes {
		if n.AttrInt("fill_round", 0) == 1 {
			return true
		}
	}
	return false
}

func hasOp(m *graph.Model, op string) bool {
	for _, n := range m.Graph.Nodes {
		if n.Is(op) {
			return true
		}
	}
	return false
}
