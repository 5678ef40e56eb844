package validate

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// Metrics compare one output of the rewrite with the original.
type Metrics struct {
	Output  string  `json:"output"`
	MaxAbs  float64 `json:"max_abs"`
	MaxRel  float64 `json:"max_rel"`
	MeanAbs float64 `json:"mean_abs"`
	// Cosine is nil (JSON null, printed -) when either side is all zeros:
	// an all-zero output must never read as agreement.
	Cosine     *float64 `json:"cosine"`
	WorstIndex []int    `json:"worst_index"`
	NaNs       int      `json:"nan_or_inf"` // non-finite values in the rewrite where the original is finite
	// Lost counts positions where the original is NaN or ±Inf and the
	// rewrite gives something else (zeros for a row whose keys are all
	// -inf): exact means the same non-finite values too.
	Lost int     `json:"nonfinite_lost"`
	Pass bool    `json:"pass"`
	Atol float64 `json:"atol"`
	Rtol float64 `json:"rtol"`
	// Case names the inputs these figures come from: the worst of the
	// cases the check ran.
	Case string `json:"case,omitempty"`
}

// Tolerance returns the default absolute tolerance for a dtype (docs/design.md §8).
func Tolerance(dt graph.DType) float64 {
	switch dt {
	case graph.Float16:
		return 2e-2
	case graph.BFloat16:
		return 5e-2
	}
	return 1e-4
}

// Compare measures got against want; the verdict uses
// |got − want| ≤ atol + rtol·|want| elementwise, no new NaN/Inf, and the
// original's own NaN/Inf kept.
func Compare(name string, want, got *eval.Tensor, atol, rtol float64) (Metrics, error) {
	m := Metrics{Output: name, Atol: atol, Rtol: rtol}
	if len(want.Shape) != len(got.Shape) {
		return m, fmt.Errorf("output %q: shape %v, original %v", name, got.Shape, want.Shape)
	}
	for i := range want.Shape {
		if want.Shape[i] != got.Shape[i] {
			return m, fmt.Errorf("output %q: shape %v, original %v", name, got.Shape, want.Shape)
		}
	}
	n := want.Numel()
	var dot, nw, ng, sum float64
	worst := -1
	pass := true
	for i := 0; i < n; i++ {
		a, b := want.Float64At(i), got.Float64At(i)
		finiteA := !math.IsNaN(a) && !math.IsInf(a, 0)
		finiteB := !math.IsNaN(b) && !math.IsInf(b, 0)
		if !finiteA {
			if !sameNonFinite(a, b) {
				m.Lost++
				pass = false
			}
			continue
		}
		if !finiteB {
			m.NaNs++
			pass = false
			continue
		}
		d := math.Abs(a - b)
		sum += d
		if d > m.MaxAbs || worst < 0 {
			if d > m.MaxAbs {
				m.MaxAbs = d
			}
			if d >= m.MaxAbs {
				worst = i
			}
		}
		if r := d / math.Max(math.Abs(a), 1e-12); r > m.MaxRel && math.Abs(a) > atol {
			m.MaxRel = r
		}
		if d > atol+rtol*math.Abs(a) {
			pass = false
		}
		dot += a * b
		nw += a * a
		ng += b * b
	}
	if n > 0 {
		m.MeanAbs = sum / float64(n)
	}
	if nw > 0 && ng > 0 {
		c := dot / math.Sqrt(nw*ng)
		m.Cosine = &c
	}
	if worst >= 0 {
		m.WorstIndex = unravel(worst, want.Shape)
	}
	m.Pass = pass
	return m, nil
}

// sameNonFinite: b is the same NaN or infinity as a.
func sameNonFinite(a, b float64) bool {
	if math.IsNaN(a) {
		return math.IsNaN(b)
	}
	return a == b
}

func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return idx
}
