package eval

import (
	"fmt"
	"math"
)

// RMSNormalization (opset 23): y = x / sqrt(mean(x², axes ≥ axis) + ε) · scale,
// accumulated in float64 (stash_type float32 or wider gives the same result
// to float32 precision). Every transformers decoder exported by dynamo at
// opset ≥ 23 uses it.
func init() { register("", "RMSNormalization", opRMSNorm) }

func opRMSNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	ax, groups, n, eps, err := normGroups(c, in)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if opt(in, 1) == nil {
		return nil, fmt.Errorf("RMSNormalization needs its scale input")
	}
	sc := expandTo(in[1], x.Shape[ax:]).F
	y := make([]float32, len(x.F))
	parallelFor(groups, elemThreads(len(x.F), c.threads), func(lo, hi int) {
		for g := lo; g < hi; g++ {
			blk := x.F[g*n : (g+1)*n]
			ss := 0.0
			for _, v := range blk {
				ss += float64(v) * float64(v)
			}
			inv := 1 / math.Sqrt(ss/float64(n)+eps)
			for i, v := range blk {
				y[g*n+i] = float32(float64(v) * inv * float64(sc[i]))
			}
		}
	})
	return []*Tensor{{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}}, nil
}
