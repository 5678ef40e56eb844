package eval

import (
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
)

// runDataSet runs dir/model.onnx on dir/test_data_set_0 and compares each
// output with the stored one within tol (0: the dtype's tolerance).
func runDataSet(t *testing.T, dir string, tol float64) {
	t.Helper()
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
		tl := tol
		if tl == 0 {
			tl = tolFor(want[i].DType)
		}
		if d := diff(got[o.Name], want[i], tl, 0); d != "" {
			t.Errorf("output %s: %s", o.Name, d)
		}
	}
}

// TestONNXBackendAttention runs ONNX's own Attention node tests (plain and
// function-expanded) and compares with their stored outputs.
func TestONNXBackendAttention(t *testing.T) {
	dirs := listDirs(t, filepath.Join(corpus.Require(t), "onnx", "*", "test_*"))
	if len(dirs) == 0 {
		t.Skip("corpus holds no ONNX backend tests (onnx/*/test_*)")
	}
	pass, skip := 0, 0
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		ok := t.Run(name, func(t *testing.T) { runDataSet(t, dir, 0) })
		if ok {
			pass++
		}
	}
	t.Logf("ONNX backend attention cases: %d folders, %d pass, %d skipped", len(dirs), pass, skip)
}
