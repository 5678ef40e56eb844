package eval

import "math"

// RMSNormalization (opset 23): y = x / sqrt(mean(x², axes ≥ axis) + ε) · scale,
// accumulated in float64 (stash_type float32 or wider gives the same result
// to float32 precision). Every transformers decoder exported by dynamo at
// opset ≥ 23 uses it.
func init() { register("", "RMSNormalization", opRMSNorm) }

func opRMSNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in[0], in[1]); err != nil {
		return nil, err
	}
	x := in[0]
	ax, err := normAxis(c.attrInt("axis", -1), len(x.Shape))
	if err != nil {
		return nil, err
	}
	eps := float64(c.attrFloat("epsilon", 1e-5))
	groups, n := numel(x.Shape[:ax]), numel(x.Shape[ax:])
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
