package eval

import "math"

// expf is e^x in float32 for softmax and attention. Accuracy: relative
// error below 1.2e-7 (one float32 ulp; 8.1e-8 measured) wherever the result is a
// normal float32, checked against math.Exp by TestExpf; results below
// 2^-126 (x < -87.34) are flushed to 0, x > 88.72 gives +Inf, NaN stays
// NaN. Method: x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two so r is
// exact), e^r by a degree-6 polynomial (Cephes expf's minimax
// coefficients), 2^n by building the exponent bits.
func expf(x float32) float32 {
	d := [1]float32{x}
	expShiftGo(d[:], d[:], 0)
	return d[0]
}

// expShiftGo sets dst[i] = expf(src[i] - m) and returns the sum of the
// results in float64; dst may be src. One loop with the arithmetic inline
// (expf's body is too large for the compiler to inline per element).
// expShift runs it, or the AVX2 version 8 lanes at a time.
func expShiftGo(dst, src []float32, m float32) float64 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
		lo    = -87.33654 // ln(2^-126)
		hi    = 88.72283  // ln(MaxFloat32)
	)
	src = src[:len(dst)]
	sum := 0.0
	for i, x := range src {
		x -= m
		switch {
		case x != x:
			dst[i] = x
			sum += float64(x)
			continue
		case x < lo:
			dst[i] = 0
			continue
		case x > hi:
			dst[i] = float32(math.Inf(1))
			sum += math.Inf(1)
			continue
		}
		t := x * log2e
		var n int32
		if t >= 0 {
			n = int32(t + 0.5)
		} else {
			n = int32(t - 0.5)
		}
		fn := float32(n)
		r := x - fn*ln2hi - fn*ln2lo
		p := float32(1.9875691500e-4)
		p = p*r + 1.3981999507e-3
		p = p*r + 8.3334519073e-3
		p = p*r + 4.1665795894e-2
		p = p*r + 1.6666665459e-1
		p = p*r + 5.0000001201e-1
		y := p*r*r + r + 1
		switch {
		case n > 127: // only x close to hi: 2^n = 2·2^(n-1)
			y = y * 2 * math.Float32frombits(uint32(n-1+127)<<23)
		case n < -126:
			y = y * math.Float32frombits(uint32(n+1+127)<<23) / 2
		default:
			y *= math.Float32frombits(uint32(n+127) << 23)
		}
		dst[i] = y
		sum += float64(y)
	}
	return sum
}
