package testgraph

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// ConstantKV is attention over learned key and value tensors, the form of
// memory tokens and Perceiver-style latents: Q is computed from the input x
// (B, N, C), K and V are initializers of lower rank that MatMul broadcasts
// over Q's leading axes. form picks how K reaches the score product:
//
//	"kt"        K stored transposed (C, M): softmax(x·Wq·Kᵀ·scale)·V, ranks 3, 2, 2
//	"transpose" K stored (M, C) behind Transpose(perm 1,0)
//	"heads"     Q split into heads (B, H, N, d); K, V per head (H, M, d),
//	            K behind Transpose(perm 0,2,1): ranks 4, 3, 3
func ConstantKV(form string, b, n, c, m int) *B {
	bl := New(17)
	x := bl.Input("x", graph.Float32, b, n, c)
	q := bl.Node("MatMul", []string{x, bl.Weight(graph.Float32, int64(c), int64(c))})
	d, heads := c, 1
	var k, v string
	switch form {
	case "kt":
		k = bl.Weight(graph.Float32, int64(c), int64(m))
		v = bl.Weight(graph.Float32, int64(m), int64(c))
	case "transpose":
		k = bl.Node("Transpose", []string{bl.Weight(graph.Float32, int64(m), int64(c))}, Ints("perm", 1, 0))
		v = bl.Weight(graph.Float32, int64(m), int64(c))
	case "heads":
		heads = 4
		d = c / heads
		q = bl.Node("Reshape", []string{q, bl.I64(int64(b), int64(n), int64(heads), int64(d))})
		q = bl.Node("Transpose", []string{q}, Ints("perm", 0, 2, 1, 3))
		k = bl.Node("Transpose", []string{bl.Weight(graph.Float32, int64(heads), int64(m), int64(d))}, Ints("perm", 0, 2, 1))
		v = bl.Weight(graph.Float32, int64(heads), int64(m), int64(d))
	default:
		panic("testgraph: unknown constant K/V form " + form)
	}
	s := bl.Node("MatMul", []string{q, k})
	s = bl.Node("Mul", []string{s, bl.Scalar(1 / math.Sqrt(float64(d)))})
	p := bl.Node("Softmax", []string{s}, Int("axis", -1))
	o := bl.Node("MatMul", []string{p, v})
	if form == "heads" {
		o = bl.Node("Transpose", []string{o}, Ints("perm", 0, 2, 1, 3))
		o = bl.Node("Reshape", []string{o, bl.I64(int64(b), int64(n), int64(c))})
	}
	o = bl.Node("Add", []string{o, x})
	bl.rename(o, "out")
	return bl
}
