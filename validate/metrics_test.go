package validate

import (
	"math"
	"testing"

	"github.com/attnopt/attnopt/eval"
)

// Cosine is undefined (nil) when either side is all zeros, so an output
// zeroed by a broken rewrite never reads as agreement; positions where the
// original is NaN and the rewrite is not are counted and fail.
func TestCompareZerosAndNonFinite(t *testing.T) {
	f := func(v ...float32) *eval.Tensor { return eval.FromFloats([]int{len(v)}, v) }
	cases := []struct {
		name       string
		want, got  *eval.Tensor
		cosineNil  bool
		pass       bool
		lost, nans int
	}{
		{"same", f(1, 2, 3), f(1, 2, 3), false, true, 0, 0},
		{"rewrite all zeros", f(1, 2, 3), f(0, 0, 0), true, false, 0, 0},
		{"original all zeros", f(0, 0, 0), f(1e-5, 0, 0), true, true, 0, 0},
		{"both all zeros", f(0, 0), f(0, 0), true, true, 0, 0},
		{"NaN row zeroed", f(float32(math.NaN()), 1), f(0, 1), false, false, 1, 0},
		{"NaN kept", f(float32(math.NaN()), 1), f(float32(math.NaN()), 1), false, true, 0, 0},
		{"new NaN", f(1, 1), f(float32(math.NaN()), 1), false, false, 0, 1},
	}
	for _, c := range cases {
		m, err := Compare("out", c.want, c.got, 1e-4, 0)
		if err != nil {
			t.Fatal(err)
		}
		if (m.Cosine == nil) != c.cosineNil || m.Pass != c.pass || m.Lost != c.lost || m.NaNs != c.nans {
			t.Errorf("%s: cosine %v, pass %v, lost %d, new %d", c.name, m.Cosine, m.Pass, m.Lost, m.NaNs)
		}
		if m.Cosine != nil && *m.Cosine == 1 && c.name == "rewrite all zeros" {
			t.Errorf("%s: cosine 1", c.name)
		}
	}
}
