package schema

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// Shape inference of the fused attention ops, registered with the graph
// package when passes/ is imported, so a model holding them loads with its
// shapes known whichever floor of passes/ reads it.
func init() {
	graph.RegisterInfer("attnopt", "FlashAttention", InferFlash)
	graph.RegisterInfer("attnopt", "WindowAttention", InferFlash)
	// MultiHeadAttention: (B, S, H·Dv) from query (B, S, ·) and value (B, L, H·Dv).
	graph.RegisterInfer("com.microsoft", "MultiHeadAttention", func(g *graph.Graph, n *graph.Node) {
		q, v := n.Input(0), n.Input(2)
		if q == nil || v == nil || q.Type.Rank() != 3 || v.Type.Rank() != 3 {
			return
		}
		n.Output(0).SetType(graph.TensorOf(q.Type.DType, graph.Shape{q.Type.Shape[0], q.Type.Shape[1], v.Type.Shape[2]}))
	})
	graph.RegisterInfer("", "Attention", func(g *graph.Graph, n *graph.Node) {
		q, v := n.Input(0), n.Input(2)
		if q == nil || v == nil || q.Type.Rank() != 4 || v.Type.Rank() != 4 {
			return
		}
		out := append(graph.Shape(nil), q.Type.Shape...)
		out[3] = v.Type.Shape[3]
		n.Output(0).SetType(graph.TensorOf(q.Type.DType, out))
	})
	// GroupQueryAttention: output like query; present K/V (B, Hkv, S, D).
	graph.RegisterInfer("com.microsoft", "GroupQueryAttention", func(g *graph.Graph, n *graph.Node) {
		if q := n.Input(0); q != nil && q.Type.Rank() == 3 {
			n.Output(0).SetType(q.Type)
		}
	})
	// com.microsoft.Attention: (B, S, v_hidden) from input (B, S, ·).
	graph.RegisterInfer("com.microsoft", "Attention", func(g *graph.Graph, n *graph.Node) {
		x, w := n.Input(0), n.Input(1)
		if x == nil || w == nil || x.Type.Rank() != 3 || w.Type.Rank() != 2 {
			return
		}
		sizes, _, err := PackedSizes(n, w)
		if err != nil {
			return
		}
		n.Output(0).SetType(graph.TensorOf(x.Type.DType, graph.Shape{x.Type.Shape[0], x.Type.Shape[1], graph.D(sizes[2])}))
	})
}

// InferFlash is FlashAttention's output (…, Nq, Dv) from Q (…, Nq, Dqk) and
// V (…, Nk, Dv); the canonical ops and WindowAttention share it.
func InferFlash(g *graph.Graph, n *graph.Node) {
	q, v := n.Input(0), n.Input(2)
	if q == nil || v == nil || !q.Type.Ranked || !v.Type.Ranked || len(q.Type.Shape) < 2 {
		return
	}
	out := append(graph.Shape(nil), q.Type.Shape...)
	out[len(out)-1] = v.Type.Shape[len(v.Type.Shape)-1]
	n.Output(0).SetType(graph.TensorOf(q.Type.DType, out))
}

// PackedSizes are the hidden sizes of Q, K and V in com.microsoft.Attention's
// weight columns: qkv_hidden_sizes, or three equal parts. at names the node
// or value at fault when they do not split.
func PackedSizes(n *graph.Node, w *graph.Value) (sizes [3]int64, at string, err error) {
	cols, static := w.Type.Shape[1].Value()
	if hs := n.AttrInts("qkv_hidden_sizes"); len(hs) > 0 {
		if len(hs) != 3 || hs[0] <= 0 || hs[1] <= 0 || hs[2] <= 0 || (static && hs[0]+hs[1]+hs[2] != cols) {
			return sizes, n.Label(), fmt.Errorf("qkv_hidden_sizes %v do not split the weights' %s columns", hs, w.Type.Shape[1])
		}
		if hs[0] != hs[1] {
			return sizes, n.Label(), fmt.Errorf("qkv_hidden_sizes %v: Q and K differ in size", hs)
		}
		copy(sizes[:], hs)
		return sizes, "", nil
	}
	if !static || cols%3 != 0 {
		return sizes, w.Name, fmt.Errorf("weights %q have %s columns, not three equal static parts", w.Name, w.Type.Shape[1])
	}
	return [3]int64{cols / 3, cols / 3, cols / 3}, "", nil
}
