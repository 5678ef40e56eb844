package validate_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// ONNX's own Attention backend tests: each `_expanded` folder, rewritten by
// attnopt for every target, reproduces the stored expected outputs in the Go
// runtime and (ort and onnx targets, attnopt with the custom-op library) in
// ONNX Runtime.
func TestExpandedAttentionRewritesReproduceONNXOutputs(t *testing.T) {
	root := corpus.Require(t)
	var dirs []string
	for _, sub := range []string{"node", "node_main_extra"} {
		matches, _ := filepath.Glob(filepath.Join(root, "onnx", sub, "test_attention_*_expanded"))
		dirs = append(dirs, matches...)
	}
	if len(dirs) == 0 {
		t.Skip("corpus holds no onnx/*/test_attention_*_expanded")
	}
	sort.Strings(dirs)
	ortR, customOK := ortRunner(t)
	checked := 0
	for _, dir := range dirs {
		orig, err := graph.Load(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if len(passes.FindSites(orig.Graph).Sites) == 0 {
			continue // exposed-intermediate cases: nothing to rewrite
		}
		inputs, outputs := readDataSet(t, orig, filepath.Join(dir, "test_data_set_0"))
		for _, target := range passes.TargetNames() {
			name := filepath.Base(dir) + "/" + target
			m, _ := graph.Load(filepath.Join(dir, "model.onnx"))
			c, err := passes.Rewrite(m, passes.Options{Target: target, VerifyEach: true})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if c.FusedCount() == 0 {
				for _, a := range c.Actions {
					t.Logf("%s: site left: %s", name, a.Reason)
				}
				continue
			}
			data, _ := m.Marshal()
			m, _ = graph.LoadBytes(data, "")
			runners := []validate.Runner{validate.GoRunner{}}
			if ortR != nil && (target != "attnopt" || customOK) {
				runners = append(runners, ortR)
			}
			for _, r := range runners {
				got, err := r.Run(m, inputs)
				if err != nil {
					t.Errorf("%s (%s): %v", name, r.Name(), err)
					continue
				}
				for _, o := range orig.Graph.Outputs {
					want := outputs[o.Name]
					if want == nil {
						continue
					}
					tol := validate.Tolerance(o.Type.DType)
					if strings.Contains(name, "fp16") {
						tol = validate.Tolerance(graph.Float16)
					}
					met, err := validate.Compare(o.Name, want, got[o.Name], tol, 0)
					if err != nil || !met.Pass {
						t.Errorf("%s (%s): output %s: %v max abs %.3g", name, r.Name(), o.Name, err, met.MaxAbs)
					}
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d rewritten cases checked", checked)
	}
	t.Logf("%d rewritten cases reproduce ONNX's expected outputs", checked)
}

// readDataSet reads input_*.pb / output_*.pb, naming them by graph order.
func readDataSet(t *testing.T, m *graph.Model, dir string) (map[string]*eval.Tensor, map[string]*eval.Tensor) {
	t.Helper()
	ins, outs := map[string]*eval.Tensor{}, map[string]*eval.Tensor{}
	for i, v := range m.Graph.Inputs {
		tt, err := eval.ReadTensorProtoFile(filepath.Join(dir, "input_"+itoa(i)+".pb"))
		if err != nil {
			t.Fatal(err)
		}
		ins[v.Name] = tt
	}
	for i, v := range m.Graph.Outputs {
		p := filepath.Join(dir, "output_"+itoa(i)+".pb")
		if _, err := os.Stat(p); err != nil {
			continue
		}
		tt, err := eval.ReadTensorProtoFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outs[v.Name] = tt
	}
	return ins, outs
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i))) }
