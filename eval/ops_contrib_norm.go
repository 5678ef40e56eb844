package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// The normalizations ONNX Runtime's transformers optimizer fuses (its
// contrib docs; outputs checked against ONNX Runtime on testdata/ops/ms_*):
// SimplifiedLayerNormalization is RMS normalization over the axes from
// axis on, y = x / sqrt(mean(x²) + ε) · scale, with inv_std_var;
// SkipSimplifiedLayerNormalization is that over input + skip (+ bias) of
// the last axis, giving the sum as input_skip_bias_sum;
// EmbedLayerNormalization is LayerNormalization of word[input_ids] +
// position[position_ids or 0…S−1] (+ segment[segment_ids]), with the mask
// index (the count of kept tokens per row of mask, 0 without one) and the
// sum before normalization.

// rmsGroups normalizes groups of n values by their root mean square,
// scaled by sc (n values); it returns y and each group's 1/rms.
func rmsGroups(x []float32, groups, n int, eps float64, sc []float32, threads int) ([]float32, []float64) {
	y := make([]float32, len(x))
	inv := make([]float64, groups)
	parallelFor(groups, elemThreads(len(x), threads), func(lo, hi int) {
		for g := lo; g < hi; g++ {
			blk := x[g*n : (g+1)*n]
			ss := 0.0
			for _, v := range blk {
				ss += float64(v) * float64(v)
			}
			inv[g] = 1 / math.Sqrt(ss/float64(n)+eps)
			for i, v := range blk {
				y[g*n+i] = float32(float64(v) * inv[g] * float64(sc[i]))
			}
		}
	})
	return y, inv
}

// statTensor is one value per group, shaped like x with the normalized
// axes (from ax on) of size 1.
func statTensor(x *Tensor, ax int, vals []float64) *Tensor {
	shape := append([]int{}, x.Shape...)
	for i := ax; i < len(shape); i++ {
		shape[i] = 1
	}
	t := NewTensor(graph.Float32, shape)
	for i, v := range vals {
		t.F[i] = float32(v)
	}
	return t
}

func opSimplifiedLayerNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	ax, groups, n, eps, err := normGroups(c, in)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if opt(in, 1) == nil {
		return nil, fmt.Errorf("SimplifiedLayerNormalization needs its scale input")
	}
	y, inv := rmsGroups(x.F, groups, n, eps, expandTo(in[1], x.Shape[ax:]).F, c.threads)
	return []*Tensor{{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}, statTensor(x, ax, inv)}, nil
}

func opSkipSimplifiedLayerNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in...); err != nil {
		return nil, err
	}
	x, gamma := in[0], in[2]
	sum, err := skipSum(c, x, in[1], opt(in, 3))
	if err != nil {
		return nil, err
	}
	ax := len(sum.Shape) - 1
	n := sum.Shape[ax]
	y, inv := rmsGroups(sum.F, sum.Numel()/n, n, float64(c.attrFloat("epsilon", 1e-12)), expandTo(gamma, sum.Shape[ax:]).F, c.threads)
	out := &Tensor{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}
	// mean is not computed by an RMS normalization: an empty tensor.
	return []*Tensor{out, NewTensor(graph.Float32, []int{0}), statTensor(sum, ax, inv), sum}, nil
}

func opEmbedLayerNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	ids, seg, word, pos := in[0], opt(in, 1), in[2], in[3]
	segEmb, gamma, beta, mask, posIDs := opt(in, 4), in[5], in[6], opt(in, 7), opt(in, 8)
	if err := needFloat(word, pos, segEmb, gamma, beta); err != nil {
		return nil, err
	}
	if len(ids.Shape) != 2 || len(word.Shape) != 2 || len(pos.Shape) != 2 {
		return nil, fmt.Errorf("EmbedLayerNormalization: input_ids %v, embeddings %v and %v", ids.Shape, word.Shape, pos.Shape)
	}
	B, S, H := ids.Shape[0], ids.Shape[1], word.Shape[1]
	sum := NewTensor(word.DType, []int{B, S, H})
	row := func(table *Tensor, idx int64, what string) ([]float32, error) {
		if idx < 0 || int(idx) >= table.Shape[0] || table.Shape[1] != H {
			return nil, fmt.Errorf("EmbedLayerNormalization: %s %d outside its table %v", what, idx, table.Shape)
		}
		return table.F[int(idx)*H : int(idx+1)*H], nil
	}
	idv := ids.ints()
	for b := 0; b < B; b++ {
		for s := 0; s < S; s++ {
			p := int64(s)
			if posIDs != nil {
				// (B, S), or (1, S) shared by every row
				p = posIDs.ints()[(b*S+s)%posIDs.Numel()]
			}
			rows := [][2]any{{word, idv[b*S+s]}, {pos, p}}
			if seg != nil && segEmb != nil {
				rows = append(rows, [2]any{segEmb, seg.ints()[b*S+s]})
			}
			dst := sum.F[(b*S+s)*H : (b*S+s+1)*H]
			for i, r := range rows {
				src, err := row(r[0].(*Tensor), r[1].(int64), [...]string{"input id", "position", "segment id"}[i])
				if err != nil {
					return nil, err
				}
				for j := range dst {
					dst[j] += src[j]
				}
			}
		}
	}
	y, _, _ := normalizeGroups(sum.F, B*S, H, float64(c.attrFloat("epsilon", 1e-12)), c.threads)
	for i := range y {
		y[i] = y[i]*gamma.F[i%H] + beta.F[i%H]
	}
	maskIndex := NewTensor(graph.Int32, []int{B})
	if mask != nil {
		mv := mask.ints()
		for b := 0; b < B; b++ {
			for s := 0; s < S; s++ {
				if mv[b*S+s] != 0 {
					maskIndex.I[b]++
				}
			}
		}
	}
	return []*Tensor{{DType: word.DType, Shape: []int{B, S, H}, F: y}, maskIndex, sum}, nil
}

func init() {
	register("com.microsoft", "SkipSimplifiedLayerNormalization", opSkipSimplifiedLayerNorm)
	register("com.microsoft", "EmbedLayerNormalization", opEmbedLayerNorm)
	// ONNX Runtime registers SimplifiedLayerNormalization in the default
	// domain; some tools write it in com.microsoft.
	register("", "SimplifiedLayerNormalization", opSimplifiedLayerNorm)
	register("com.microsoft", "SimplifiedLayerNormalization", opSimplifiedLayerNorm)
}
