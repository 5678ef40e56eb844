package eval

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
)

// RunNodes over a site (here: every node of an expanded Attention) gives
// what Run gives, and names what it was not fed.
func TestRunNodes(t *testing.T) {
	dir := corpus.Path(t, "onnx", "node", "test_attention_4d_attn_mask_expanded")
	m, err := graph.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	ins, want, err := loadDataSet(m, filepath.Join(dir, "test_data_set_0"))
	if err != nil {
		t.Fatal(err)
	}
	out := m.Graph.Outputs[0].Name
	got, err := RunNodes(m, m.Graph.Nodes, ins, []string{out}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got[out], want[0], 1e-4, 0); d != "" {
		t.Fatal(d)
	}
	delete(ins, m.Graph.Inputs[0].Name)
	if _, err := RunNodes(m, m.Graph.Nodes, ins, []string{out}, Options{}); err == nil || !strings.Contains(err.Error(), "neither fed nor computed") {
		t.Fatalf("missing feed: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	m, feeds, _, err := buildOpModel("Relu", "", 17, nil, []*Tensor{f32(s(2), 1, -1)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(m, map[string]*Tensor{}, Options{}); err == nil || !strings.Contains(err.Error(), "missing input") {
		t.Errorf("missing input: %v", err)
	}
	feeds["x0"] = i64s(s(2), 1, 2)
	if _, err := Run(m, feeds, Options{}); err == nil || !strings.Contains(err.Error(), "model declares float32") {
		t.Errorf("wrong dtype: %v", err)
	}
	if _, err := runOp("Gather", "", 13, nil, []*Tensor{f32(s(2), 1, 2), f32(s(1), 0)}, 1); err == nil {
		t.Error("float indices accepted")
	}
	// a kernel panic, even in a worker goroutine, is an error, not a crash
	register("test.eval", "Panic", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		parallelFor(4, 2, func(lo, hi int) { panic("boom") })
		return nil, nil
	})
	if _, err := runOp("Panic", "test.eval", 17, nil, []*Tensor{f32(s(1), 1)}, 1); err == nil || !strings.Contains(err.Error(), "internal error: boom") {
		t.Errorf("panic: %v", err)
	}
}
