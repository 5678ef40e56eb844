package eval

// hasFMA reports AVX2 and FMA in the CPU with AVX state enabled by the OS
// (CPUID and XGETBV), the features kern6x16AVX2 needs.
var hasFMA = detectFMA()

// setFMA lets tests run the portable kernel on an FMA machine.
func setFMA(on bool) { hasFMA = on }

func cpuid(eax, ecx uint32) (a, b, c, d uint32)
func xgetbv() (eax uint32)

//go:noescape
func kern6x16AVX2(kc int, a, b *float32, ldb int, tile *[gemmMR * gemmNR]float32)

func detectFMA() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if c1&fma == 0 || c1&osxsave == 0 || c1&avx == 0 {
		return false
	}
	if xgetbv()&6 != 6 { // XMM and YMM state saved by the OS
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0 // AVX2
}

// kern6x16 sets tile to the 6×16 product of a packed A sliver and a B
// panel whose rows are ldb apart, over kc steps.
func kern6x16(kc int, a, b []float32, ldb int, tile *[gemmMR * gemmNR]float32) {
	if hasFMA && kc > 0 {
		_ = a[kc*gemmMR-1]
		_ = b[(kc-1)*ldb+gemmNR-1]
		kern6x16AVX2(kc, &a[0], &b[0], ldb, tile)
		return
	}
	kern6x16Go(kc, a, b, ldb, tile)
}
