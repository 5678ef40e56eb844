package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// ONNX Runtime contrib ops that fused BERT/GPT/ViT exports carry around
// their attention, so such models can run here too.

func geluErf(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// withBias adds an optional bias input, then maps f elementwise.
func withBias(c *opCtx, x, bias *Tensor, f func(float64) float64) (*Tensor, error) {
	if bias != nil {
		var err error
		if x, err = binaryOp(x, bias, c.threads, func(a, b float64) float64 { return a + b }, nil); err != nil {
			return nil, err
		}
	}
	out := NewTensor(x.DType, x.Shape)
	for i, v := range x.F {
		out.F[i] = float32(f(float64(v)))
	}
	return out, nil
}

func opSkipLayerNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in...); err != nil {
		return nil, err
	}
	x, skip, gamma := in[0], in[1], in[2]
	beta, bias := opt(in, 3), opt(in, 4)
	add := func(a, b float64) float64 { return a + b }
	sum, err := binaryOp(x, skip, c.threads, add, nil)
	if err != nil {
		return nil, err
	}
	if bias != nil {
		if sum, err = binaryOp(sum, bias, c.threads, add, nil); err != nil {
			return nil, err
		}
	}
	sum.normalize()
	H := sum.Shape[len(sum.Shape)-1]
	eps := float64(c.attrFloat("epsilon", 1e-12))
	y, means, inv := normalizeGroups(sum.F, sum.Numel()/H, H, eps, c.threads)
	for i := range y {
		y[i] *= gamma.F[i%H]
		if beta != nil {
			y[i] += beta.F[i%H]
		}
	}
	statShape := append(append([]int{}, sum.Shape[:len(sum.Shape)-1]...), 1)
	mt, it := NewTensor(graph.Float32, statShape), NewTensor(graph.Float32, statShape)
	for g := range means {
		mt.F[g], it.F[g] = float32(means[g]), float32(inv[g])
	}
	return []*Tensor{{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}, mt, it, sum}, nil
}

// opContribAttention is com.microsoft.Attention: a packed QKV projection
// followed by the same attention as MultiHeadAttention.
func opContribAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x, w := in[0], in[1]
	bias, mask := opt(in, 2), opt(in, 3)
	if p := opt(in, 4); p != nil && p.Numel() > 0 {
		return nil, fmt.Errorf("Attention (com.microsoft): past state is not supported")
	}
	if c.attrInt("do_rotary", 0) != 0 {
		return nil, fmt.Errorf("Attention (com.microsoft): do_rotary is not supported")
	}
	heads := int(c.attrInt("num_heads", 0))
	sizes := toInts(c.attrInts("qkv_hidden_sizes"))
	if len(sizes) == 0 {
		h := w.Shape[1] / 3
		sizes = []int{h, h, h}
	}
	if len(sizes) != 3 || sizes[0]+sizes[1]+sizes[2] != w.Shape[1] {
		return nil, fmt.Errorf("qkv_hidden_sizes %v for weights %v", sizes, w.Shape)
	}
	qkv, err := matmul(x, w, c.threads)
	if err != nil {
		return nil, err
	}
	if bias != nil {
		if qkv, err = binaryOp(qkv, bias, c.threads, func(a, b float64) float64 { return a + b }, nil); err != nil {
			return nil, err
		}
	}
	qkv.normalize()
	q := sliceAxis(qkv, 2, 0, sizes[0])
	k := sliceAxis(qkv, 2, sizes[0], sizes[1])
	v := sliceAxis(qkv, 2, sizes[0]+sizes[1], sizes[2])
	if mask != nil && len(mask.Shape) == 4 {
		return nil, fmt.Errorf("Attention (com.microsoft): 4-D mask_index is not supported")
	}
	if mask != nil && len(mask.Shape) == 1 && mask.Shape[0] == 2*x.Shape[0] {
		mask = keySpans(mask, x.Shape[0], x.Shape[1])
	}
	if mask != nil && len(mask.Shape) == 1 && mask.Shape[0] != x.Shape[0] {
		return nil, fmt.Errorf("Attention (com.microsoft): mask_index of shape %v is not supported", mask.Shape)
	}
	y, kh, vh, err := mhaCore(c, q, k, v, mask, opt(in, 5), heads)
	if err != nil {
		return nil, err
	}
	// present = stack(K, V): (2, B, H, L, d)
	present := NewTensor(kh.DType, append([]int{2}, kh.Shape...))
	copy(present.F, kh.F)
	copy(present.F[len(kh.F):], vh.F)
	return []*Tensor{y, present}, nil
}

// keySpans turns mask_index (2B), exclusive ends then inclusive starts
// (left padding), into the raw (B, T) 0/1 mask: key j is kept when
// start ≤ j < end.
func keySpans(m *Tensor, b, t int) *Tensor {
	ids := m.ints()
	out := NewTensor(graph.Int32, []int{b, t})
	for i := 0; i < b; i++ {
		for j := 0; j < t; j++ {
			if int64(j) < ids[i] && int64(j) >= ids[b+i] {
				out.I[i*t+j] = 1
			}
		}
	}
	return out
}

func init() {
	const ms = "com.microsoft"
	register(ms, "SkipLayerNormalization", opSkipLayerNorm)
	register(ms, "FastGelu", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		r, err := withBias(c, in[0], opt(in, 1), geluTanh)
		return []*Tensor{r}, err
	})
	register(ms, "BiasGelu", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		r, err := withBias(c, in[0], in[1], geluErf)
		return []*Tensor{r}, err
	})
	register(ms, "Gelu", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		r, err := withBias(c, in[0], nil, geluErf)
		return []*Tensor{r}, err
	})
	register(ms, "QuickGelu", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		a := float64(c.attrFloat("alpha", 1.702))
		r, err := withBias(c, in[0], nil, func(x float64) float64 { return x * sigmoid(a*x) })
		return []*Tensor{r}, err
	})
	register(ms, "Attention", opContribAttention)
}
