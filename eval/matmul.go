package eval

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// Block sizes of the matmul kernel: a kc×nc panel of B stays in cache
// while rows of A stream past it.
const (
	mmKC = 128
	mmNC = 512
	mmMR = 16 // rows per parallel task
)

// gemmRows computes C[i,:] += A[i,:]·B for rows [r0,r1) of a row-major
// M×K A and K×N B, blocked over K and N. The inner loop is an axpy over a
// contiguous row of B, which the compiler keeps in registers.
func gemmRows(a, b, c []float32, k, n, r0, r1 int) {
	for j0 := 0; j0 < n; j0 += mmNC {
		j1 := min(j0+mmNC, n)
		for p0 := 0; p0 < k; p0 += mmKC {
			p1 := min(p0+mmKC, k)
			for i := r0; i < r1; i++ {
				ci := c[i*n+j0 : i*n+j1]
				ai := a[i*k : i*k+k]
				for p := p0; p < p1; p++ {
					s := ai[p]
					if s == 0 {
						continue
					}
					bp := b[p*n+j0 : p*n+j1]
					bp = bp[:len(ci)] // lets the compiler drop bounds checks
					for j := range ci {
						ci[j] += s * bp[j]
					}
				}
			}
		}
	}
}

// batchedMatMul multiplies count pairs: A_b (m×k) at aOff[b], B_b (k×n) at
// bOff[b], into C (count×m×n), parallel over (batch, row block).
func batchedMatMul(a, b []float32, aOff, bOff []int, m, k, n, threads int) []float32 {
	count := len(aOff)
	c := make([]float32, count*m*n)
	blocks := (m + mmMR - 1) / mmMR
	tasks := count * blocks
	work := count * m * n * k
	if work < 1<<15 {
		threads = 1
	}
	parallelFor(tasks, threads, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			bi, rb := t/blocks, t%blocks
			r0, r1 := rb*mmMR, min(rb*mmMR+mmMR, m)
			ab := a[aOff[bi] : aOff[bi]+m*k]
			bb := b[bOff[bi] : bOff[bi]+k*n]
			cb := c[bi*m*n : (bi+1)*m*n]
			gemmRows(ab, bb, cb, k, n, r0, r1)
		}
	})
	return c
}

// matmul implements ONNX MatMul with numpy semantics (1-D promotion,
// broadcast batch dims).
func matmul(x, y *Tensor, threads int) (*Tensor, error) {
	if x.F == nil || y.F == nil {
		if x.I != nil && y.I != nil {
			return matmulInt(x, y)
		}
		return nil, fmt.Errorf("MatMul of %s and %s", x.DType, y.DType)
	}
	as, bs := x.Shape, y.Shape
	dropM, dropN := false, false
	if len(as) == 1 {
		as = []int{1, as[0]}
		dropM = true
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
		dropN = true
	}
	m, k := as[len(as)-2], as[len(as)-1]
	k2, n := bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		return nil, fmt.Errorf("MatMul %v × %v: inner dims differ", x.Shape, y.Shape)
	}
	batch, err := broadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, err
	}
	cnt := numel(batch)
	aOff, bOff := make([]int, cnt), make([]int, cnt)
	sa := bcastStrides(as[:len(as)-2], batch)
	sb := bcastStrides(bs[:len(bs)-2], batch)
	walk2(batch, sa, sb, func(o, i, j int) { aOff[o], bOff[o] = i*m*k, j*k*n })
	c := batchedMatMul(x.F, y.F, aOff, bOff, m, k, n, threads)
	shape := append([]int{}, batch...)
	if !dropM {
		shape = append(shape, m)
	}
	if !dropN {
		shape = append(shape, n)
	}
	return &Tensor{DType: x.DType, Shape: shape, F: c}, nil
}

func matmulInt(x, y *Tensor) (*Tensor, error) {
	fx, fy := castTo(x, graph.Float64), castTo(y, graph.Float64)
	r, err := matmul(fx, fy, 1)
	if err != nil {
		return nil, err
	}
	return castTo(r, x.DType), nil
}

func init() {
	register("", "MatMul", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		r, err := matmul(in[0], in[1], c.threads)
		return []*Tensor{r}, err
	})
	register("", "Gemm", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		a, b := in[0], in[1]
		if c.attrInt("transA", 0) != 0 {
			a = transpose(a, []int{1, 0})
		}
		if c.attrInt("transB", 0) != 0 {
			b = transpose(b, []int{1, 0})
		}
		r, err := matmul(a, b, c.threads)
		if err != nil {
			return nil, err
		}
		alpha := c.attrFloat("alpha", 1)
		if alpha != 1 {
			for i := range r.F {
				r.F[i] *= alpha
			}
		}
		if len(in) > 2 && in[2] != nil {
			beta := float64(c.attrFloat("beta", 1))
			r, err = binaryOp(r, in[2], c.threads, func(x, y float64) float64 { return x + beta*y }, nil)
			if err != nil {
				return nil, err
			}
		}
		return []*Tensor{r}, nil
	})
}
