package eval

import (
	"path/filepath"
	"testing"
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
		t.Run(filepath.Base(dir), func(t *testing.T) { runDataSet(t, dir, 1e-5) })
	}
}
