package eval

import "math"

// expVec holds expShiftAVX2's constants, each in all 8 lanes: the
// reduction and polynomial of expShiftGo, the underflow bound, a bound
// (88, so 2^n stays a normal float32) above which lanes go to the Go loop,
// and the exponent bias.
var expVec = func() (k [13][8]float32) {
	vals := [12]float32{1.44269504088896341, 0.693359375, -2.12194440e-4,
		1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
		1, -87.33654, 88}
	for i, v := range vals {
		for j := range k[i] {
			k[i][j] = v
		}
	}
	for j := range k[12] {
		k[12][j] = math.Float32frombits(127) // int32 lanes read as ints
	}
	return k
}()

//go:noescape
func expShiftAVX2(dst, src *float32, n int, m float32, k *[13][8]float32) (done int, sum float64)

// expShift sets dst[i] = e^(src[i]-m) and returns the sum in float64 (see
// expShiftGo). With AVX2/FMA whole 8-lane blocks run in assembly (the same
// reduction and polynomial, fused multiply-adds, ties of the reduction to
// even: within the accuracy TestExpf states); the tail, and everything from
// a block holding NaN or a value above 88 onward, runs in Go.
func expShift(dst, src []float32, m float32) float64 {
	src = src[:len(dst)]
	done, sum := 0, 0.0
	if hasFMA && len(dst) >= 8 {
		done, sum = expShiftAVX2(&dst[0], &src[0], len(dst), m, &expVec)
	}
	return sum + expShiftGo(dst[done:], src[done:], m)
}
