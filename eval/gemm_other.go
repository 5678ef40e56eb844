//go:build !amd64

package eval

var hasFMA = false

func setFMA(on bool) {}

func kern6x16(kc int, a, b []float32, ldb int, tile *[gemmMR * gemmNR]float32) {
	kern6x16Go(kc, a, b, ldb, tile)
}
