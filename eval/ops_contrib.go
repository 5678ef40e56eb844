package eval

import (
	"fmt"
	"math"
	"slices"

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
	x, err := addBias(c, x, bias)
	if err != nil {
		return nil, err
	}
	out := NewTensor(x.DType, x.Shape)
	for i, v := range x.F {
		out.F[i] = float32(f(float64(v)))
	}
	return out, nil
}

// addBias is x + bias, broadcast; x itself without a bias.
func addBias(c *opCtx, x, bias *Tensor) (*Tensor, error) {
	if bias == nil {
		return x, nil
	}
	return binaryOp(x, bias, c.threads, func(a, b float64) float64 { return a + b }, nil)
}

// skipSum is the residual sum the Skip*LayerNormalization ops normalize and
// return: x + skip (+ bias), normalized.
func skipSum(c *opCtx, x, skip, bias *Tensor) (*Tensor, error) {
	sum, err := addBias(c, x, skip)
	if err == nil {
		sum, err = addBias(c, sum, bias)
	}
	if err != nil {
		return nil, err
	}
	sum.normalize()
	return sum, nil
}

func opSkipLayerNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in...); err != nil {
		return nil, err
	}
	x, skip, gamma := in[0], in[1], in[2]
	beta := opt(in, 3)
	sum, err := skipSum(c, x, skip, opt(in, 4))
	if err != nil {
		return nil, err
	}
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
// followed by the same attention as MultiHeadAttention, after past's keys
// and values when there is a cache; present stacks the full K and V.
func opContribAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x, w := in[0], in[1]
	bias, mask := opt(in, 2), opt(in, 3)
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
	if qkv, err = addBias(c, qkv, bias); err != nil {
		return nil, err
	}
	qkv.normalize()
	q := sliceAxis(qkv, 2, 0, sizes[0])
	k := sliceAxis(qkv, 2, sizes[0], sizes[1])
	v := sliceAxis(qkv, 2, sizes[0]+sizes[1], sizes[2])
	// past (2, B, H, P, d): the cached keys and values come first.
	if p := opt(in, 4); p != nil && p.Numel() > 0 {
		if len(p.Shape) != 5 || p.Shape[0] != 2 {
			return nil, fmt.Errorf("Attention (com.microsoft): past of shape %v is not (2, B, H, P, d)", p.Shape)
		}
		kv := [2]*Tensor{k, v}
		for i := range kv {
			h, err := headsFirst(kv[i], heads)
			if err != nil {
				return nil, err
			}
			if kv[i], err = concatSeq(sliceAxis(p, 0, i, 1).reshaped(p.Shape[1:]), h); err != nil {
				return nil, err
			}
		}
		k, v = kv[0], kv[1]
	}
	if mask != nil {
		if mask, err = rawMask(mask, x.Shape[0], k.Shape[len(k.Shape)-2], c.attrInt("unidirectional", 0) != 0); err != nil {
			return nil, err
		}
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

// rawMask turns every mask_index form ONNX Runtime's CPU kernel runs into
// the raw 0/1 form (B, T) or (B, S, T) for S queries over T keys (the
// cache's included): key
// lengths (B) keep j < len, spans (2B) (ends, then starts) keep
// start ≤ j < end, and raw masks keep positive entries. Without
// unidirectional, a row that keeps no key keeps them all: mask_filter_value
// is then added to all its scores, a constant the softmax cancels, and
// adding it would only round the scores at its magnitude.
func rawMask(m *Tensor, b, t int, causal bool) (*Tensor, error) {
	ids := m.ints()
	var out *Tensor
	switch {
	case len(m.Shape) == 1 && (m.Shape[0] == b || m.Shape[0] == 2*b):
		out = NewTensor(graph.Int32, []int{b, t})
		for i := 0; i < b; i++ {
			start := int64(0)
			if m.Shape[0] == 2*b {
				start = ids[b+i]
			}
			for j := 0; j < t; j++ {
				if int64(j) < ids[i] && int64(j) >= start {
					out.I[i*t+j] = 1
				}
			}
		}
	case (len(m.Shape) == 2 || len(m.Shape) == 3) && m.Shape[len(m.Shape)-1] == t:
		out = NewTensor(graph.Int32, append([]int(nil), m.Shape...))
		for i, v := range ids {
			if v > 0 {
				out.I[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("Attention (com.microsoft): mask_index of shape %v is not supported", m.Shape)
	}
	if !causal {
		for r := 0; r < len(out.I); r += t {
			row := out.I[r : r+t]
			if slices.Max(row) == 0 {
				for j := range row {
					row[j] = 1
				}
			}
		}
	}
	return out, nil
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
