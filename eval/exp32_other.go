//go:build !amd64

package eval

func expShift(dst, src []float32, m float32) float64 { return expShiftGo(dst, src, m) }
