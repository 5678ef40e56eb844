package eval

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// naiveGemm is the float64 reference product.
func naiveGemm(a, b []float32, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				c[i*n+j] += float64(a[i*k+p]) * float64(b[p*n+j])
			}
		}
	}
	return c
}

// The packed GEMM matches a float64 product on shapes that hit every edge:
// partial slivers and panels, several K blocks, batches, k = 0, one thread
// and two; with the assembly kernel and with the portable one.
func TestGemmBatch(t *testing.T) {
	shapes := []struct{ count, m, k, n int }{
		{1, 1, 1, 1}, {1, 5, 3, 7}, {1, 6, 16, 16}, {1, 7, 17, 33}, {2, 13, 300, 70},
		{1, 100, 513, 600}, {3, 1, 9, 1030}, {1, 150, 64, 2}, {2, 4, 0, 5},
	}
	kernels := []bool{hasFMA}
	if hasFMA {
		kernels = append(kernels, false)
	}
	for _, fma := range kernels {
		for _, sh := range shapes {
			for _, threads := range []int{1, 2} {
				name := fmt.Sprintf("fma=%v/%dx%dx%dx%d/t%d", fma, sh.count, sh.m, sh.k, sh.n, threads)
				t.Run(name, func(t *testing.T) {
					saved := hasFMA
					setFMA(fma)
					defer setFMA(saved)
					rng := rand.New(rand.NewSource(3))
					a := randTensor(rng, sh.count, sh.m, sh.k).F
					b := randTensor(rng, sh.count, sh.k, sh.n).F
					aOff, bOff := make([]int, sh.count), make([]int, sh.count)
					for i := range aOff {
						aOff[i], bOff[i] = i*sh.m*sh.k, i*sh.k*sh.n
					}
					c := make([]float32, sh.count*sh.m*sh.n)
					for i := range c {
						c[i] = float32(math.NaN()) // every element must be written
					}
					gemmBatch(a, b, c, aOff, bOff, sh.m, sh.k, sh.n, threads)
					for bi := 0; bi < sh.count; bi++ {
						want := naiveGemm(a[aOff[bi]:], b[bOff[bi]:], sh.m, sh.k, sh.n)
						for i, w := range want {
							got := float64(c[bi*sh.m*sh.n+i])
							// float32 accumulation of k products of N(0,1) values
							if d := math.Abs(got - w); !(d <= 1e-5*float64(sh.k+1)) {
								t.Fatalf("batch %d element %d: %g, want %g", bi, i, got, w)
							}
						}
					}
				})
			}
		}
	}
}

// BenchmarkGemmKernel compares the micro-kernels on a 512³ product (one
// thread), the case for the assembly one.
func BenchmarkGemmKernel(b *testing.B) {
	kernels := []bool{false}
	if hasFMA {
		kernels = append(kernels, true)
	}
	rng := rand.New(rand.NewSource(1))
	const n = 512
	x, y := randTensor(rng, n, n).F, randTensor(rng, n, n).F
	c := make([]float32, n*n)
	for _, fma := range kernels {
		b.Run(fmt.Sprintf("fma=%v", fma), func(b *testing.B) {
			saved := hasFMA
			setFMA(fma)
			defer setFMA(saved)
			for i := 0; i < b.N; i++ {
				gemmBatch(x, y, c, []int{0}, []int{0}, n, n, n, 1)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmDirectB compares reading B in place with packing it, for
// the few-rows products of convolutions (m output channels, n positions)
// and a square one, two threads.
func BenchmarkGemmDirectB(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	for _, sh := range []struct{ m, k, n int }{{16, 576, 13824}, {24, 64, 32768}, {72, 288, 4096}} {
		x, y := randTensor(rng, sh.m, sh.k).F, randTensor(rng, sh.k, sh.n).F
		c := make([]float32, sh.m*sh.n)
		for _, rows := range []int{0, 72} {
			b.Run(fmt.Sprintf("%dx%dx%d/direct-rows=%d", sh.m, sh.k, sh.n, rows), func(b *testing.B) {
				saved := gemmDirectRows
				gemmDirectRows = rows
				defer func() { gemmDirectRows = saved }()
				for i := 0; i < b.N; i++ {
					gemmBatch(x, y, c, []int{0}, []int{0}, sh.m, sh.k, sh.n, 2)
				}
				b.ReportMetric(2*float64(sh.m*sh.k*sh.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
