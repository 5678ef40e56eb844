package eval

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// batchedMatMul multiplies count pairs: A_b (m×k) at aOff[b], B_b (k×n) at
// bOff[b], into C (count×m×n) with the packed GEMM of gemm.go.
func batchedMatMul(a, b []float32, aOff, bOff []int, m, k, n, threads int) []float32 {
	c := make([]float32, len(aOff)*m*n)
	gemmBatch(a, b, c, aOff, bOff, m, k, n, threads)
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
