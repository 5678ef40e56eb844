package testgraph

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Exporter-style attention blocks. Each returns a builder whose graph has
// the block's inputs and one output "out".

func perm(p ...int64) []int64 { return p }

// SDPABoolMask is F.scaled_dot_product_attention(q, k, v, attn_mask=bool) as
// the TorchScript exporter writes it: √scale on Q and on Kᵀ, the bool mask
// turned into Where(mask, 0, -inf) and added.
func SDPABoolMask(opset int64, dt graph.DType, b, h, n, d int) *B {
	bl := New(opset)
	q := bl.Input("q", dt, b, h, n, d)
	k := bl.Input("k", dt, b, h, n, d)
	v := bl.Input("v", dt, b, h, n, d)
	mask := bl.Input("mask", graph.Bool, 1, 1, n, n)
	sq := math.Sqrt(1 / math.Sqrt(float64(d)))
	qs := bl.Node("Mul", []string{q, bl.ScalarOf(dt, sq)})
	kt := bl.Node("Transpose", []string{k}, Ints("perm", 0, 1, 3, 2))
	ks := bl.Node("Mul", []string{kt, bl.ScalarOf(dt, sq)})
	s := bl.Node("MatMul", []string{qs, ks})
	bias := bl.Node("Where", []string{mask, bl.ScalarOf(dt, 0), bl.ScalarOf(dt, NegInf)})
	s = bl.Node("Add", []string{s, bias})
	p := bl.Node("Softmax", []string{s}, Int("axis", -1))
	o := bl.Node("MatMul", []string{p, v})
	bl.rename(o, "out")
	return bl
}

// rename makes the last node's output a graph output named name.
func (b *B) rename(old, name string) {
	last := b.g.Node[len(b.g.Node)-1]
	for i, o := range last.Output {
		if o == old {
			last.Output[i] = name
		}
	}
	b.Output(name)
}

// HFSelfAttention is a BERT-style block as the TorchScript exporter writes it
// with dynamic axes: projections, Reshape targets computed from Shape,
// K transposed by perm (0,2,3,1), Div by √d, an additive (B,1,1,N) mask.
func HFSelfAttention(opset int64, batch, seq any, hidden, heads int) *B {
	bl := New(opset)
	d := hidden / heads
	x := bl.Input("x", graph.Float32, batch, seq, hidden)
	mask := bl.Input("mask", graph.Float32, batch, 1, 1, seq)
	shape := bl.Node("Shape", []string{x})
	bdim := bl.Node("Gather", []string{shape, bl.ScalarI64(0)}, Int("axis", 0))
	ndim := bl.Node("Gather", []string{shape, bl.ScalarI64(1)}, Int("axis", 0))
	ub := bl.Node("Unsqueeze", []string{bdim, bl.I64(0)})
	un := bl.Node("Unsqueeze", []string{ndim, bl.I64(0)})
	target := bl.Node("Concat", []string{ub, un, bl.I64(int64(heads)), bl.I64(int64(d))}, Int("axis", 0))
	proj := func() string {
		w := bl.Weight(graph.Float32, int64(hidden), int64(hidden))
		bias := bl.Weight(graph.Float32, int64(hidden))
		y := bl.Node("MatMul", []string{x, w})
		y = bl.Node("Add", []string{bias, y})
		return bl.Node("Reshape", []string{y, target})
	}
	q := bl.Node("Transpose", []string{proj()}, Ints("perm", 0, 2, 1, 3))
	kt := bl.Node("Transpose", []string{proj()}, Ints("perm", 0, 2, 3, 1))
	v := bl.Node("Transpose", []string{proj()}, Ints("perm", 0, 2, 1, 3))
	s := bl.Node("MatMul", []string{q, kt})
	s = bl.Node("Div", []string{s, bl.Scalar(math.Sqrt(float64(d)))})
	s = bl.Node("Add", []string{s, mask})
	p := bl.Node("Softmax", []string{s}, Int("axis", -1))
	o := bl.Node("MatMul", []string{p, v})
	o = bl.Node("Transpose", []string{o}, Ints("perm", 0, 2, 1, 3))
	back := bl.Node("Concat", []string{ub, un, bl.I64(int64(hidden))}, Int("axis", 0))
	o = bl.Node("Reshape", []string{o, back})
	bl.rename(o, "out")
	return bl
}

// ScalarI64 adds an int64 scalar initializer.
func (b *B) ScalarI64(v int64) string { return b.Const(graph.Int64, nil, float64(v)) }

// SAGAN is SelfAttention2 from ProGAN/SAGAN: 1×1 convs with C/8 channels for
// query and key and C for value, energy = bmm(qᵀ, k), no scale, and
// out = bmm(v, attnᵀ) with V channels-first.
func SAGAN(opset int64, c, hgt, wid int) *B {
	bl := New(opset)
	x := bl.Input("x", graph.Float32, 1, c, hgt, wid)
	n := int64(hgt * wid)
	conv := func(out int) string {
		w := bl.Weight(graph.Float32, int64(out), int64(c), 1, 1)
		bias := bl.Weight(graph.Float32, int64(out))
		return bl.Node("Conv", []string{x, w, bias}, Ints("kernel_shape", 1, 1))
	}
	q := bl.Node("Reshape", []string{conv(c / 8), bl.I64(1, int64(c/8), n)})
	q = bl.Node("Transpose", []string{q}, Ints("perm", 0, 2, 1))
	k := bl.Node("Reshape", []string{conv(c / 8), bl.I64(1, int64(c/8), n)})
	v := bl.Node("Reshape", []string{conv(c), bl.I64(1, int64(c), n)})
	e := bl.Node("MatMul", []string{q, k})
	a := bl.Node("Softmax", []string{e}, Int("axis", -1))
	at := bl.Node("Transpose", []string{a}, Ints("perm", 0, 2, 1))
	o := bl.Node("MatMul", []string{v, at})
	o = bl.Node("Reshape", []string{o, bl.I64(1, int64(c), int64(hgt), int64(wid))})
	o = bl.Node("Mul", []string{bl.Scalar(0.5), o})
	o = bl.Node("Add", []string{o, x})
	bl.rename(o, "out")
	return bl
}

// CPA3D is the channels-last 3D cross-attention of a medical ViT: tokens
// from (1,D,H,W,C) grids, rearrange 'b n (h d) -> (b h) n d', bmm with Kᵀ,
// scores times scale.
func CPA3D(opset int64, dd, hh, ww, c, heads int) *B {
	bl := New(opset)
	n := int64(dd * hh * ww)
	hd := int64(c / heads)
	x1 := bl.Input("x1", graph.Float32, 1, dd, hh, ww, c)
	x2 := bl.Input("x2", graph.Float32, 1, dd, hh, ww, c)
	tok := func(x string) string { return bl.Node("Reshape", []string{x, bl.I64(1, n, int64(c))}) }
	t1, t2 := tok(x1), tok(x2)
	split := func(t string) string {
		y := bl.Node("MatMul", []string{t, bl.Weight(graph.Float32, int64(c), int64(c))})
		y = bl.Node("Reshape", []string{y, bl.I64(1, n, int64(heads), hd)})
		y = bl.Node("Transpose", []string{y}, Ints("perm", 0, 2, 1, 3))
		return bl.Node("Reshape", []string{y, bl.I64(int64(heads), n, hd)})
	}
	q, k, v := split(t1), split(t2), split(t2)
	kt := bl.Node("Transpose", []string{k}, Ints("perm", 0, 2, 1))
	s := bl.Node("MatMul", []string{q, kt})
	s = bl.Node("Mul", []string{s, bl.Scalar(1 / math.Sqrt(float64(hd)))})
	p := bl.Node("Softmax", []string{s}, Int("axis", -1))
	o := bl.Node("MatMul", []string{p, v})
	o = bl.Node("Reshape", []string{o, bl.I64(1, int64(heads), n, hd)})
	o = bl.Node("Transpose", []string{o}, Ints("perm", 0, 2, 1, 3))
	o = bl.Node("Reshape", []string{o, bl.I64(1, int64(dd), int64(hh), int64(ww), int64(c))})
	bl.rename(o, "out")
	return bl
}

// SpatialSelfAttention is diffusers' Attention over an NCHW feature map
// (AttnDownBlock2D/AttnUpBlock2D of a UNet2DModel) as torch's dynamo
// exporter writes it at opset 18: x viewed as (1, C, H·W) and transposed,
// Q/K/V projections split into heads, SDPA decomposed with every reshape
// target folded to a constant (Kᵀ reshaped to [1, heads, d, H·W]), the
// output projected, transposed back to (1, C, H, W) and added to x. With
// flatK, K also passes through a flat [heads·H·W·d] reshape, a length folded
// into a shape that a reduced-length run cannot cut.
func SpatialSelfAttention(c, hgt, wid, heads int, flatK bool) *B {
	bl := New(18)
	n, cc, hd := int64(hgt*wid), int64(c), int64(c/heads)
	x := bl.Input("x", graph.Float32, 1, c, hgt, wid)
	t := bl.Node("Transpose", []string{bl.Node("Reshape", []string{x, bl.I64(1, cc, n)})}, Ints("perm", 0, 2, 1))
	proj := func(in string) string {
		y := bl.Node("MatMul", []string{in, bl.Weight(graph.Float32, cc, cc)})
		return bl.Node("Add", []string{y, bl.Weight(graph.Float32, cc)})
	}
	split := func(y string) string {
		y = bl.Node("Reshape", []string{y, bl.I64(1, n, int64(heads), hd)})
		return bl.Node("Transpose", []string{y}, Ints("perm", 0, 2, 1, 3))
	}
	q, k, v := split(proj(t)), split(proj(t)), split(proj(t))
	if flatK {
		k = bl.Node("Reshape", []string{k, bl.I64(int64(heads) * n * hd)})
		k = bl.Node("Reshape", []string{k, bl.I64(1, int64(heads), n, hd)})
	}
	kt := bl.Node("Reshape", []string{k, bl.I64(-1, n, hd)})
	kt = bl.Node("Transpose", []string{kt}, Ints("perm", 0, 2, 1))
	kt = bl.Node("Reshape", []string{kt, bl.I64(1, int64(heads), hd, n)})
	sq := bl.Const(graph.Float32, []int64{1}, math.Sqrt(1/math.Sqrt(float64(hd))))
	s := bl.Node("MatMul", []string{bl.Node("Mul", []string{q, sq}), bl.Node("Mul", []string{kt, sq})})
	o := bl.Node("MatMul", []string{bl.Node("Softmax", []string{s}, Int("axis", -1)), v})
	o = bl.Node("Reshape", []string{bl.Node("Transpose", []string{o}, Ints("perm", 0, 2, 1, 3)), bl.I64(1, n, cc)})
	o = bl.Node("Transpose", []string{proj(o)}, Ints("perm", 0, 2, 1))
	o = bl.Node("Reshape", []string{o, bl.I64(1, cc, int64(hgt), int64(wid))})
	o = bl.Node("Add", []string{o, x})
	bl.rename(o, "out")
	return bl
}

// GatherNDPositions adds to q the rows of a per-batch position table read
// at kv_pos + 4 by GatherND (batch_dims 1), as an HF export reads a table
// at the cache's positions, then attends q to itself: kv_pos must stay
// below 4 for the model to run.
func GatherNDPositions() *B {
	b := New(17)
	q := b.Input("q", graph.Float32, 2, 8, 4)
	pos := b.Input("kv_pos", graph.Int64, 2, 8)
	idx := b.Node("Unsqueeze", []string{b.Node("Add", []string{pos, b.ScalarI64(4)}), b.I64(-1)})
	q = b.Node("Add", []string{q, b.Node("GatherND", []string{b.Weight(graph.Float32, 2, 8, 4), idx}, Int("batch_dims", 1))})
	s := b.Node("MatMul", []string{q, b.Node("Transpose", []string{q}, Ints("perm", 0, 2, 1))})
	out := b.Node("MatMul", []string{b.Node("Softmax", []string{s}, Int("axis", -1)), q})
	b.rename(out, "out")
	return b
}
