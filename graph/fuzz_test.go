package graph_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/hostile"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
)

// FuzzLoad: any bytes either load into a graph that verifies and matches, or
// fail with an input error; never a panic or a huge allocation.
func FuzzLoad(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("not a model"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := loadOrInputError(t, data)
		if m == nil {
			return
		}
		if err := m.Graph.Verify(); err != nil {
			t.Fatalf("loaded graph does not verify: %v", err)
		}
		passes.FindSites(m.Graph)
		if _, err := m.Marshal(); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

// addSeeds adds the fuzz targets' common seeds: valid attention models and
// every hostile class of internal/hostile (the crashers found so far).
func addSeeds(f *testing.F) {
	f.Add(testgraph.SAGAN(17, 16, 4, 4).Bytes())
	f.Add(testgraph.SDPABoolMask(17, graph.Float16, 1, 2, 8, 4).Bytes())
	f.Add(testgraph.HFSelfAttention(17, "batch", "seq", 16, 2).Bytes())
	f.Add(testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 4, D: 4, Mask: "causal"}).Bytes())
	for _, b := range hostile.Models() {
		f.Add(b)
	}
	// Attention inside If branches and a Loop body (rewritten in place).
	for _, name := range []string{"cond_if_dynamo", "loop_script"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "models", name, "model.onnx")); err == nil {
			f.Add(b)
		}
	}
}

// loadOrInputError loads data, or returns nil when it fails with an input
// error; any other failure fails the test.
func loadOrInputError(t *testing.T, data []byte) *graph.Model {
	m, err := graph.LoadBytes(data, "")
	if err != nil && !graph.IsInputError(err) {
		t.Fatalf("non-input error: %v", err)
	}
	return m
}
