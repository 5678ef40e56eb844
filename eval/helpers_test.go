package eval

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// tolFor is the default absolute tolerance per dtype (DESIGN §8).
func tolFor(dt graph.DType) float64 {
	switch dt {
	case graph.Float16:
		return 2e-2
	case graph.BFloat16:
		return 5e-2
	}
	return 1e-4
}

// diff compares got with want: same dtype and shape, NaN where want is NaN,
// |got-want| <= atol + rtol·|want| elsewhere. It returns "" when they agree.
func diff(got, want *Tensor, atol, rtol float64) string {
	if got.DType != want.DType {
		return fmt.Sprintf("dtype %s, want %s", got.DType, want.DType)
	}
	if !sameShape(got.Shape, want.Shape) {
		return fmt.Sprintf("shape %v, want %v", got.Shape, want.Shape)
	}
	worst, wi := 0.0, -1
	for i := 0; i < want.Numel(); i++ {
		g, w := got.Float64At(i), want.Float64At(i)
		if math.IsNaN(w) || math.IsNaN(g) {
			if math.IsNaN(w) != math.IsNaN(g) {
				return fmt.Sprintf("element %d: got %v, want %v", i, g, w)
			}
			continue
		}
		if math.IsInf(w, 0) || math.IsInf(g, 0) {
			if g != w {
				return fmt.Sprintf("element %d: got %v, want %v", i, g, w)
			}
			continue
		}
		d := math.Abs(g - w)
		if d > atol+rtol*math.Abs(w) && d > worst {
			worst, wi = d, i
		}
	}
	if wi >= 0 {
		return fmt.Sprintf("max error %.3g at %d (got %v, want %v)", worst, wi, got.Float64At(wi), want.Float64At(wi))
	}
	return ""
}

// loadDataSet reads the inputs and outputs of a test_data_set folder in
// the model's declared order.
func loadDataSet(m *graph.Model, dir string) (map[string]*Tensor, []*Tensor, error) {
	ins := map[string]*Tensor{}
	for i, v := range m.Graph.Inputs {
		t, _, err := ReadTensorProtoFile(filepath.Join(dir, fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return nil, nil, err
		}
		ins[v.Name] = t
	}
	var outs []*Tensor
	for i := range m.Graph.Outputs {
		t, _, err := ReadTensorProtoFile(filepath.Join(dir, fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return nil, nil, err
		}
		outs = append(outs, t)
	}
	return ins, outs, nil
}

// randomInputs makes seeded inputs for every graph input; symbolic or
// unknown dims are pinned to small values.
func randomInputs(m *graph.Model, seed int64) (map[string]*Tensor, error) {
	rng := rand.New(rand.NewSource(seed))
	ins := map[string]*Tensor{}
	for _, v := range m.Graph.Inputs {
		if !v.Type.Ranked {
			return nil, fmt.Errorf("input %q has unknown rank", v.Name)
		}
		shape := make([]int, len(v.Type.Shape))
		for i, d := range v.Type.Shape {
			if x, ok := d.Value(); ok {
				shape[i] = int(x)
			} else {
				shape[i] = 2
			}
		}
		t := NewTensor(v.Type.DType, shape)
		switch {
		case v.Type.DType == graph.String:
			return nil, fmt.Errorf("input %q is a string", v.Name)
		case t.F != nil:
			for i := range t.F {
				t.F[i] = float32(rng.NormFloat64())
			}
		case t.I != nil:
			for i := range t.I {
				t.I[i] = 1
			}
		default:
			for i := range t.B {
				t.B[i] = true
			}
		}
		ins[v.Name] = t.normalize()
	}
	return ins, nil
}

func listDirs(t *testing.T, pattern string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(pattern)
	sort.Strings(dirs)
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

func short(s string) string {
	return strings.TrimPrefix(s, "/work/shared/corpus/")
}
