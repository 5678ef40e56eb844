package eval

import (
	"math"
	"testing"
)

// expf keeps its stated accuracy over the whole normal range, and its
// edges (underflow, overflow, infinities, NaN) behave as documented.
func TestExpf(t *testing.T) {
	worst, at := 0.0, float32(0)
	for x := float32(-87.3); x <= 88.7; x += 1.0 / 4096 {
		for _, v := range []float32{x, math.Nextafter32(x, 0)} {
			want := math.Exp(float64(v))
			if want < 0x1p-126 {
				continue
			}
			if rel := math.Abs(float64(expf(v))-want) / want; rel > worst {
				worst, at = rel, v
			}
		}
	}
	if worst > 1.2e-7 {
		t.Errorf("max relative error %.3g at x = %g, documented < 1.2e-7", worst, at)
	}
	t.Logf("max relative error %.3g at x = %g", worst, at)
	edges := []struct{ x, want float32 }{
		{0, 1}, {-88, 0}, {float32(math.Inf(-1)), 0}, {89, float32(math.Inf(1))}, {float32(math.Inf(1)), float32(math.Inf(1))},
	}
	for _, e := range edges {
		if got := expf(e.x); got != e.want {
			t.Errorf("expf(%g) = %g, want %g", e.x, got, e.want)
		}
	}
	if got := expf(float32(math.NaN())); got == got {
		t.Errorf("expf(NaN) = %g, want NaN", got)
	}
}
