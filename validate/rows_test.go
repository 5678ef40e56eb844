package validate_test

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// Fixtures whose stored inputs hold query rows that see no key
// (testdata/export/export_padding.py): left padding under causal, padding
// under local attention, one dead row of a bool mask.
var emptyRowFixtures = []string{"hf_qwen3_leftpad", "hf_modernbert_pad", "sdpa_dead_row"}

// The causal constructions of testdata/export/export_causal.py, left-padded
// (Optimum's masks, ALiBi folded with causal, MPT, Gemma 3's band, GPT-2
// with a dynamic sequence).
var causalRowFixtures = []string{"optimum_", "mpt_alibi", "hf_mpt", "gemma3", "gpt2_sdpa_dynseq"}

func isEmptyRowFixture(name string) bool {
	return hasPrefix(name, emptyRowFixtures) || hasPrefix(name, causalRowFixtures)
}

func hasPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Every rewrite of those fixtures gives the original's values on the rows
// that see no key, in the Go runtime and in ONNX Runtime, for every target:
// the same NaN where the original has NaN, the same mean of V under a
// finite fill. With the old zero rows forced (passes.Options.ZeroEmptyRows)
// the attnopt rewrite of each dynamo opset-18 export differs: those average V
// over a finfo.min fill, where the TorchScript exports guard the rows to
// zeros and ONNX Attention-23 zeros them by the spec.
func TestFullyMaskedRowsExact(t *testing.T) {
	ortR, customOK := ortRunner(t)
	checked, causal := 0, 0
	for _, fx := range fixtures(t) {
		if !isEmptyRowFixture(fx.Name) {
			continue
		}
		if hasPrefix(fx.Name, emptyRowFixtures) {
			checked++
		} else {
			causal++
		}
		path := filepath.Join("..", "testdata", fx.File)
		dir := filepath.Dir(path)
		for _, target := range passes.TargetNames() {
			t.Run(fx.Name+"/"+target, func(t *testing.T) {
				orig, err := graph.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if target == "onnx" && orig.Opset("") < 23 {
					t.Skipf("opset %d: the onnx target needs 23", orig.Opset(""))
				}
				ins := storedInputs(t, orig, dir)
				rew := rewritten(t, path, passes.Options{Target: target, VerifyEach: true})
				runners := []validate.Runner{validate.GoRunner{}}
				// ONNX Runtime before 1.31 gives Attention-23's fully masked
				// rows the mean of V, not the spec's zeros the rewrite keeps
				// (docs/fully-masked-rows.md).
				spec := strings.HasSuffix(fx.Name, "_op23") && ortR != nil && versionBefore(ortR.Version(), 1, 31)
				if ortR != nil && (target != "attnopt" || customOK) && !spec {
					runners = append(runners, ortR)
				}
				for _, r := range runners {
					if d := disagreement(t, r, orig, rew, ins); d != "" {
						t.Errorf("%s runtime: %s", r.Name(), d)
					}
				}
				if target != "attnopt" || !strings.HasSuffix(fx.Name, "_dynamo") {
					return
				}
				old := rewritten(t, path, passes.Options{Target: target, ZeroEmptyRows: true})
				for _, r := range runners {
					if disagreement(t, r, orig, old, ins) == "" {
						t.Errorf("%s runtime: the rewrite with zero rows forced agrees with the original: the inputs reach no fully masked row", r.Name())
					}
				}
			})
		}
	}
	if checked != 3*len(emptyRowFixtures) {
		t.Errorf("%d fully-masked-row fixtures in testdata/MANIFEST.json, want %d", checked, 3*len(emptyRowFixtures))
	}
	if causal < 20 {
		t.Errorf("%d left-padded causal fixtures (export_causal.py) in testdata/MANIFEST.json, want at least 20", causal)
	}
}

// versionBefore reports whether version "X.Y.Z" is older than major.minor.
func versionBefore(version string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(version, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a < major || (a == major && b < minor)
}

func rewritten(t *testing.T, path string, opts passes.Options) *graph.Model {
	t.Helper()
	m, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := passes.Rewrite(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Actions {
		if !a.Fused && !a.Kept && !(opts.Target == "gqa" && a.Reason != "") && !refusedByDesign(opts.Target, a) {
			t.Errorf("site %d not fused: %s", a.Site.ID, a.Reason)
		}
	}
	data, _ := m.Marshal()
	m, err = graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func storedInputs(t *testing.T, m *graph.Model, dir string) map[string]*eval.Tensor {
	t.Helper()
	ins := map[string]*eval.Tensor{}
	for i, v := range m.Graph.Inputs {
		x, err := eval.ReadTensorProtoFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			t.Fatal(err)
		}
		ins[v.Name] = x
	}
	return ins
}

// disagreement runs both models on ins and says where they differ: a NaN on
// one side only, or a finite difference over 1e-4 (fp32 outputs); "" when
// they agree.
func disagreement(t *testing.T, r validate.Runner, orig, rew *graph.Model, ins map[string]*eval.Tensor) string {
	t.Helper()
	a, err := r.Run(orig, ins)
	if err != nil {
		t.Fatalf("original: %v", err)
	}
	b, err := r.Run(rew, ins)
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	for _, o := range orig.Graph.Outputs {
		x, y := a[o.Name], b[o.Name]
		tol := validate.Tolerance(x.DType)
		for i := 0; i < x.Numel(); i++ {
			p, q := x.Float64At(i), y.Float64At(i)
			if math.IsNaN(p) != math.IsNaN(q) {
				return fmt.Sprintf("output %s[%d]: original %g, rewrite %g", o.Name, i, p, q)
			}
			if !math.IsNaN(p) && math.Abs(p-q) > tol {
				return fmt.Sprintf("output %s[%d]: original %g, rewrite %g (tolerance %g)", o.Name, i, p, q, tol)
			}
		}
	}
	return ""
}
