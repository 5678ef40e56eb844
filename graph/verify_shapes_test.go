package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// TestSaveRunsTheLoadShapeChecks: a graph changed after loading into one
// the loader refuses (a MatMul whose operands no longer multiply) fails the
// check before saving, with the load-time message, and no file is written.
func TestSaveRunsTheLoadShapeChecks(t *testing.T) {
	b := testgraph.New(17)
	a := b.Input("a", graph.Float32, 2, 3)
	w := b.Input("w", graph.Float32, 3, 4)
	b.Output(b.Node("MatMul", []string{a, w}))
	m, err := graph.LoadBytes(b.Bytes(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.VerifyForSave(); err != nil {
		t.Fatalf("valid graph refused: %v", err)
	}
	m.Graph.Value("w").Type = graph.TensorOf(graph.Float32, graph.Shape{graph.D(5), graph.D(4)})
	err = m.VerifyForSave()
	if err == nil || !strings.Contains(err.Error(), `cannot multiply "a" [2,3] by "w" [5,4]`) {
		t.Fatalf("got %v, want the loader's MatMul refusal", err)
	}
	out := filepath.Join(t.TempDir(), "out.onnx")
	if _, err := m.Save(out); err == nil {
		t.Fatal("saved a model the loader refuses")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a file was written: %v", err)
	}
}

// TestSizeLimitMessage: the limit the message states is the one enforced
// (DType.StorageBytes refuses more than 2^59 bytes), on both sides of it.
func TestSizeLimitMessage(t *testing.T) {
	for _, c := range []struct {
		dims []any
		ok   bool
	}{
		{[]any{int64(1) << 57}, true},    // 2^59 bytes of float32: the largest allowed
		{[]any{int64(1)<<57 + 1}, false}, // 4 bytes more
		{[]any{int64(1) << 40, int64(1) << 40}, false},
	} {
		b := testgraph.New(17)
		x := b.Input("x", graph.Float32, c.dims...)
		b.Output(b.Node("Relu", []string{x}))
		_, err := graph.LoadBytes(b.Bytes(), "")
		if c.ok && err != nil {
			t.Errorf("%v: refused: %v", c.dims, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "needs more than 2^59 bytes")) {
			t.Errorf("%v: got %v, want a refusal naming 2^59 bytes", c.dims, err)
		}
	}
}
