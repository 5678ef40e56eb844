package eval

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim
// features of every head by the angles in cos_cache/sin_cache, either as two
// halves (x1 = x[:d/2], x2 = x[d/2:]) or interleaved pairs (x[0::2],
// x[1::2]): (x1, x2) → (cos·x1 − sin·x2, sin·x1 + cos·x2). X is
// (B, H, S, D), or (B, S, H·D) with num_heads; the caches are (B, S, ≥d/2),
// or (max_position, ≥d/2) indexed by position_ids (B, S).
//
// com.microsoft.RotaryEmbedding, which ONNX Runtime's optimizer writes for
// decoders, is the same rotation with its inputs in another order (input,
// position_ids, cos_cache, sin_cache), position_ids (B, S) or one offset
// (1) that token s adds to, and, for a rank-3 input without num_heads, the
// head size twice the caches' width.
func init() {
	register("", "RotaryEmbedding", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return opRotary(c, in[0], in[1], in[2], opt(in, 3), int(c.attrInt("num_heads", 0)))
	})
	register("com.microsoft", "RotaryEmbedding", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x, pos, cosC := in[0], in[1], in[2]
		if c.attrFloat("scale", 1) != 1 || c.attrInt("is_packed_batching", 0) != 0 {
			return nil, fmt.Errorf("RotaryEmbedding (com.microsoft): scale and is_packed_batching are not supported")
		}
		heads := int(c.attrInt("num_heads", 0))
		if len(x.Shape) == 3 && heads == 0 && len(cosC.Shape) == 2 && cosC.Shape[1] > 0 {
			heads = x.Shape[2] / (2 * cosC.Shape[1])
		}
		if len(x.Shape) >= 2 && pos.Numel() == 1 {
			b, s := x.Shape[0], x.Shape[len(x.Shape)-2]
			if len(x.Shape) == 3 {
				s = x.Shape[1]
			}
			ids := NewTensor(graph.Int64, []int{b, s})
			for i := range ids.I {
				ids.I[i] = pos.ints()[0] + int64(i%s)
			}
			pos = ids
		}
		return opRotary(c, x, cosC, in[3], pos, heads)
	})
}

func opRotary(c *opCtx, x, cosC, sinC, pos *Tensor, heads int) ([]*Tensor, error) {
	if err := needFloat(x, cosC, sinC); err != nil {
		return nil, err
	}
	if pos != nil && pos.I == nil {
		pos = &Tensor{DType: graph.Int64, Shape: pos.Shape, I: pos.ints()}
	}
	// Index X as (B, S, H, D) with strides, whatever its layout.
	var B, S, H, D, sB, sS, sH int
	switch len(x.Shape) {
	case 4:
		B, H, S, D = x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
		sB, sH, sS = H*S*D, S*D, D
	case 3:
		H = heads
		if H <= 0 || x.Shape[2]%H != 0 {
			return nil, fmt.Errorf("rank-3 input needs num_heads dividing its hidden size %d", x.Shape[2])
		}
		B, S, D = x.Shape[0], x.Shape[1], x.Shape[2]/H
		sB, sS, sH = S*H*D, H*D, D
	default:
		return nil, fmt.Errorf("input of rank %d (want 3 or 4)", len(x.Shape))
	}
	rd := int(c.attrInt("rotary_embedding_dim", 0))
	if rd == 0 {
		rd = D
	}
	if rd > D || rd%2 != 0 {
		return nil, fmt.Errorf("rotary_embedding_dim %d with head size %d", rd, D)
	}
	half := rd / 2
	cw := cosC.Shape[len(cosC.Shape)-1]
	if half > cw || len(sinC.Shape) != len(cosC.Shape) || sinC.Shape[len(sinC.Shape)-1] != cw {
		return nil, fmt.Errorf("caches %v, %v are narrower than rotary dim %d / 2", cosC.Shape, sinC.Shape, rd)
	}
	// row(b, s) is the cache row of token s of batch b.
	row := func(b, s int) (int, error) { return b*S + s, nil }
	switch {
	case pos != nil:
		if len(cosC.Shape) != 2 || numel(pos.Shape) != B*S {
			return nil, fmt.Errorf("position_ids %v with caches %v", pos.Shape, cosC.Shape)
		}
		row = func(b, s int) (int, error) {
			p := int(pos.I[b*S+s])
			if p < 0 || p >= cosC.Shape[0] {
				return 0, fmt.Errorf("position id %d outside the cache of %d rows", p, cosC.Shape[0])
			}
			return p, nil
		}
	case len(cosC.Shape) != 3 || cosC.Shape[0] != B || cosC.Shape[1] != S:
		return nil, fmt.Errorf("caches %v: want (B, S, ·) = (%d, %d, ·) without position_ids", cosC.Shape, B, S)
	}
	interleaved := c.attrInt("interleaved", 0) != 0
	out := &Tensor{DType: x.DType, Shape: append([]int{}, x.Shape...), F: append([]float32{}, x.F...)}
	for b := 0; b < B; b++ {
		for s := 0; s < S; s++ {
			r, err := row(b, s)
			if err != nil {
				return nil, err
			}
			cs, sn := cosC.F[r*cw:r*cw+half], sinC.F[r*cw:r*cw+half]
			for h := 0; h < H; h++ {
				base := b*sB + s*sS + h*sH
				for i := 0; i < half; i++ {
					i1, i2 := base+i, base+i+half
					if interleaved {
						i1, i2 = base+2*i, base+2*i+1
					}
					x1, x2 := float64(x.F[i1]), float64(x.F[i2])
					c, sv := float64(cs[i]), float64(sn[i])
					out.F[i1] = float32(c*x1 - sv*x2)
					out.F[i2] = float32(sv*x1 + c*x2)
				}
			}
		}
	}
	return []*Tensor{out}, nil
}
