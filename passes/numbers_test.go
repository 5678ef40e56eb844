package passes_test

import (
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/validate"
)

// checkRewriteNumbers holds a rewritten model m to the original's outputs:
// the attnopt dump to golden when one is named, then output "out" to want
// in every runner, through a save and load as a file would go (ONNX Runtime
// skipped for the attnopt target without the custom-op library).
func checkRewriteNumbers(t *testing.T, m *graph.Model, target, golden string, ins, want map[string]*eval.Tensor, tol float64, runners []validate.Runner, customOK bool) {
	t.Helper()
	if golden != "" {
		checkGolden(t, golden, m.Dump())
	}
	data, _ := m.Marshal()
	rew, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runners {
		if r.Name() == "ort" && target == "attnopt" && !customOK {
			continue
		}
		got, err := r.Run(rew, ins)
		if err != nil {
			t.Fatalf("%s: %v", r.Name(), err)
		}
		mt, err := validate.Compare("out", want["out"], got["out"], tol, 0)
		if err != nil || !mt.Pass {
			t.Errorf("%s: %v max abs %.3g at %v", r.Name(), err, mt.MaxAbs, mt.WorstIndex)
		}
	}
}
