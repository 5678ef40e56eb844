package graph_test

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// FuzzRewrite: load → inspect → rewrite → final check → serialise →
// reload. Any bytes either fail to load with an input error, or rewrite
// (or are refused by the rewrite) into a model that passes the structural
// check before saving and loads again; never a panic. Seeded with every
// hostile class of issue 13, the crashers included.
func FuzzRewrite(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := loadOrInputError(t, data)
		if m == nil {
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
