package graph_test

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/hostile"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
)

// FuzzRewrite: load → inspect → rewrite → final check → serialise →
// reload. Any bytes either fail to load with an input error, or rewrite
// (or are refused by the rewrite) into a model that passes the structural
// check before saving and loads again; never a panic. Seeded with every
// hostile class of issue 13, the crashers included.
func FuzzRewrite(f *testing.F) {
	f.Add(testgraph.SAGAN(17, 16, 4, 4).Bytes())
	f.Add(testgraph.HFSelfAttention(17, "batch", "seq", 16, 2).Bytes())
	f.Add(testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 4, D: 4, Mask: "causal"}).Bytes())
	for _, b := range hostile.Models() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := graph.LoadBytes(data, "")
		if err != nil {
			if !graph.IsInputError(err) {
				t.Fatalf("non-input error: %v", err)
			}
			return
		}
		passes.FindSites(m.Graph)
		for _, target := range []string{"attnopt", "ort"} {
			m, _ := graph.LoadBytes(data, "")
			if _, err := passes.Rewrite(m, passes.Options{Target: target}); err != nil {
				continue
			}
			if err := m.VerifyForSave(); err != nil {
				t.Fatalf("target %s: rewrite fails the final check: %v", target, err)
			}
			out, err := m.Marshal()
			if err != nil {
				t.Fatalf("target %s: marshal: %v", target, err)
			}
			if _, err := graph.LoadBytes(out, ""); err != nil {
				t.Fatalf("target %s: the rewrite does not reload: %v", target, err)
			}
		}
	})
}
