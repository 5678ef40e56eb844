package passes_test

import (
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// TestConstantKV: attention over learned keys and values (memory tokens,
// Perceiver-style latents; internal/testgraph/constkv.go) whose K and V have
// fewer axes than Q fuses for the attnopt and ort targets, exactly: stage 1
// expands K and V over Q's leading dims (passes/canonical/stage1.go
// expandOver). Each rewrite's numbers equal the original's in the Go
// runtime and, when found, ONNX Runtime; the attnopt rewrites are goldens.
func TestConstantKV(t *testing.T) {
	cases := []struct {
		form         string
		heads, kvLen int64
	}{
		{"kt", 1, 8},
		{"transpose", 1, 8},
		{"heads", 4, 8},
	}
	runners, _, customOK := testRunners(t)
	for _, tc := range cases {
		build := func() *graph.Model { return testgraph.ConstantKV(tc.form, 2, 16, 32, int(tc.kvLen)).Model() }
		orig := build()
		res := FindSites(orig.Graph)
		if len(res.Sites) != 1 {
			t.Fatalf("%s: %d sites (%v), want 1", tc.form, len(res.Sites), res.Rejected)
		}
		s := res.Sites[0]
		h, _ := s.Heads.Value()
		hkv, _ := s.KVHeads.Value()
		nk, _ := s.KVLen.Value()
		if !s.KVBroadcast || h != tc.heads || hkv != tc.heads || nk != tc.kvLen {
			t.Errorf("%s: KVBroadcast %v, heads %d/%d, Nk %d; want true, %d/%d, %d", tc.form, s.KVBroadcast, h, hkv, nk, tc.heads, tc.heads, tc.kvLen)
		}
		ins, err := validate.RandomInputs(orig, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eval.Run(orig, ins, eval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{"attnopt", "ort"} {
			t.Run(tc.form+"/"+target, func(t *testing.T) {
				m := build()
				c, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				if a := c.Actions[0]; !a.Fused {
					t.Fatalf("not fused: %s", a.Reason)
				}
				golden := ""
				if target == "attnopt" {
					golden = filepath.Join("..", "testdata", "golden", "constkv_"+tc.form+"_attnopt.txt")
				}
				checkRewriteNumbers(t, m, target, golden, ins, want, validate.Tolerance(graph.Float32), runners, customOK)
			})
		}
	}
}
