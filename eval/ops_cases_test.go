package eval

import (
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// TestOpCases runs the single-op models of testdata/ops (opset-23
// RMSNormalization and RotaryEmbedding, made by testdata/export/export_ops.py
// with outputs from ONNX's reference implementation) and compares.
func TestOpCases(t *testing.T) {
	dirs := listDirs(t, filepath.Join("..", "testdata", "ops", "*"))
	if len(dirs) < 6 {
		t.Fatalf("%d cases under testdata/ops, want 6", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, err := graph.Load(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			ins, want, err := loadDataSet(m, filepath.Join(dir, "test_data_set_0"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(m, ins, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range m.Graph.Outputs {
				if d := diff(got[o.Name], want[i], 1e-5, 0); d != "" {
					t.Errorf("output %s: %s", o.Name, d)
				}
			}
		})
	}
}
