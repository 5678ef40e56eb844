package eval

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
)

// TestFixtures runs every exported fixture under testdata/models against
// the outputs PyTorch stored next to it.
func TestFixtures(t *testing.T) {
	dirs := listDirs(t, filepath.Join("..", "testdata", "models", "*"))
	if len(dirs) == 0 {
		t.Skip("no fixtures under testdata/models")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "test_data_set_0")); err != nil {
				t.Skip("no test_data_set_0")
			}
			if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
				t.Skip("no model.onnx (export in progress?)")
			}
			m, err := graph.Load(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			if u := UnsupportedOps(m); len(u) > 0 {
				t.Fatalf("unsupported ops %v", u)
			}
			ins, want, err := loadDataSet(m, filepath.Join(dir, "test_data_set_0"))
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("incomplete test_data_set_0 (export in progress?): %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Run(m, ins, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tol := modelTol(m)
			for i, o := range m.Graph.Outputs {
				if d := diff(got[o.Name], want[i], max(tol, tolFor(want[i].DType)), 0); d != "" {
					t.Errorf("output %s: %s", o.Name, d)
				}
			}
		})
	}
}

// modelTol is the loosest default tolerance of the float types a model
// computes in: an fp16 model whose output is cast to fp32 still carries
// fp16 rounding.
func modelTol(m *graph.Model) float64 {
	tol := 0.0
	for _, v := range m.Graph.Values() {
		if v.Type.DType.IsFloat() {
			tol = max(tol, tolFor(v.Type.DType))
		}
	}
	return tol
}

// corpusErrors are corpus models that cannot run as stored, with why.
var corpusErrors = map[string]string{
	// ORT fusion-test graph: its constant mask is (1,3) for a 1-token input.
	"onnxruntime/attention_distilbert.onnx": "reshape [1 3]",
	// Weights shrunk to hidden 4 but the head count constant is still 12,
	// so hidden/heads is 0.
	"onnxruntime/gpt2_past.onnx": "copies a dim the input lacks",
	// Treats its input as (seq,batch,100) yet multiplies across seq and
	// batch; it only runs when both are 100, not at pinned small sizes.
	"tensorrt/attention_head.onnx": "inner dims differ",
}

// TestCorpusRuns runs each third-party corpus model whose ops are all
// supported on seeded random inputs, to prove the runtime does not crash;
// the others are listed with the ops they lack.
func TestCorpusRuns(t *testing.T) {
	root := corpus.Require(t)
	var files []string
	for _, p := range []string{"onnxruntime/*.onnx", "tensorrt/*.onnx", "onnxruntime-genai/*.onnx"} {
		f, _ := filepath.Glob(filepath.Join(root, p))
		files = append(files, f...)
	}
	if len(files) == 0 {
		t.Skip("corpus holds no onnxruntime/, tensorrt/ or onnxruntime-genai/ models")
	}
	ran := 0
	for _, f := range files {
		t.Run(short(f), func(t *testing.T) {
			m, err := graph.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if u := UnsupportedOps(m); len(u) > 0 {
				t.Skipf("unsupported ops %v", u)
			}
			ins, err := randomInputs(m, 1)
			if err != nil {
				t.Skip(err)
			}
			_, err = Run(m, ins, Options{})
			if want, ok := corpusErrors[short(f)]; ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("expected the known error %q, got %v", want, err)
				}
				t.Skipf("known: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			ran++
		})
	}
	t.Logf("corpus: %d of %d models ran", ran, len(files))
}
