package eval

import (
	"math"
	"testing"
)

// expf and expShift (8-lane assembly where the CPU has AVX2/FMA) keep
// their stated accuracy over the whole normal range, and the edges
// (underflow, overflow, infinities, NaN) behave as documented.
func TestExpf(t *testing.T) {
	var xs []float32
	for x := float32(-87.3); x <= 88.7; x += 1.0 / 4096 {
		xs = append(xs, x, math.Nextafter32(x, 0))
	}
	vec := make([]float32, len(xs))
	sum := expShift(vec, xs, 0)
	worst, at, total := 0.0, float32(0), 0.0
	for i, v := range xs {
		want := math.Exp(float64(v))
		total += float64(vec[i])
		if want < 0x1p-126 {
			continue
		}
		for _, got := range []float32{expf(v), vec[i]} {
			if rel := math.Abs(float64(got)-want) / want; rel > worst {
				worst, at = rel, v
			}
		}
	}
	if sum != total && math.Abs(sum-total) > 1e-12*total {
		t.Errorf("expShift's sum %g, elements add to %g", sum, total)
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
	// expShift: edge values inside 8-lane blocks, a NaN that sends the
	// rest to the Go loop, and a tail
	inf := float32(math.Inf(1))
	in := []float32{0, -1, -88, -inf, 1, 2, -100, 3, -0.5, 0.25, 89, 5, -3, -87.3, 0, 1, float32(math.NaN()), 0, 1, 2, 3}
	out := make([]float32, len(in))
	expShift(out, in, 0)
	for i, x := range in {
		if got, want := out[i], expf(x); !(got == want || got != got && want != want || math.Abs(float64(got-want)) <= 1.2e-7*float64(want)) {
			t.Errorf("expShift element %d: e^%g = %g, expf gives %g", i, x, got, want)
		}
	}
}
