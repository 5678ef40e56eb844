package cleanup

import (
	"slices"

	"github.com/attnopt/attnopt/graph"
)

// Unsqueeze/Squeeze cleanup: stage 1 and the lowering each add their own
// size-1 axes (a rank-2 site gains a batch axis, then ONNX Attention a head
// axis); these rules merge such pairs into one node or cancel them.

// axesOf reads an Unsqueeze/Squeeze node's axes (attribute before opset 13,
// constant input after), normalised against rank r.
func axesOf(n *graph.Node, r int) ([]int64, bool) {
	axes := n.AttrInts("axes")
	if len(n.Inputs) > 1 {
		var ok bool
		if axes, ok = n.Input(1).Ints(); !ok {
			return nil, false
		}
	}
	if len(axes) == 0 || r < 0 {
		return nil, false
	}
	out := make([]int64, len(axes))
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) {
			return nil, false
		}
		out[i] = a
	}
	slices.Sort(out)
	return out, true
}

// setAxes gives n new axes where it keeps them.
func setAxes(g *graph.Graph, n *graph.Node, axes []int64) {
	if len(n.Inputs) > 1 {
		n.SetInput(1, g.AddInit(n.Name+"/axes", graph.NewInt64Tensor("", []int64{int64(len(axes))}, axes)))
		return
	}
	n.SetAttr(graph.IntsAttr("axes", axes))
}

// mergeAxes combines axes applied in two steps into one step over the
// larger rank: inner positions count the axes outer does not name.
func mergeAxes(outer, inner []int64, rank int) []int64 {
	rest := others(rank, outer...)
	out := slices.Clone(outer)
	for _, a := range inner {
		if a >= int64(len(rest)) {
			return nil
		}
		out = append(out, rest[a])
	}
	slices.Sort(out)
	return out
}

// pairOf returns n's input producer when n is an op and the producer an
// inner op read by n alone.
func pairOf(g *graph.Graph, n *graph.Node, op, inner string) *graph.Node {
	if !n.Is(op) || n.Input(0) == nil {
		return nil
	}
	p := n.Input(0).Producer()
	if p == nil || !p.Is(inner) || len(n.Input(0).Uses()) != 1 || isGraphOutput(g, n.Input(0)) {
		return nil
	}
	return p
}

// foldUnsqueezePair: Unsqueeze(Unsqueeze(x, a1), a2) → Unsqueeze(x, a);
// the merge counts a1 among the positions a2 leaves, at the output's rank.
func foldUnsqueezePair(g *graph.Graph, n *graph.Node) bool {
	return foldAxesPair(g, n, "Unsqueeze", func(n, inner *graph.Node) (outer, in []int64, rank int, ok bool) {
		r := n.Output(0).Type.Rank()
		a2, ok2 := axesOf(n, r)
		a1, ok1 := axesOf(inner, inner.Output(0).Type.Rank())
		return a2, a1, r, ok1 && ok2
	})
}

// foldSqueezePair: Squeeze(Squeeze(x, a1), a2) → Squeeze(x, a); the merge
// counts a2 among the positions a1 leaves, at x's rank.
func foldSqueezePair(g *graph.Graph, n *graph.Node) bool {
	return foldAxesPair(g, n, "Squeeze", func(n, inner *graph.Node) (outer, in []int64, rank int, ok bool) {
		r := inner.Input(0).Type.Rank()
		a1, ok1 := axesOf(inner, r)
		a2, ok2 := axesOf(n, n.Input(0).Type.Rank())
		return a1, a2, r, ok1 && ok2
	})
}

// foldAxesPair merges n with the same op before it into one node.
func foldAxesPair(g *graph.Graph, n *graph.Node, op string, split func(n, inner *graph.Node) ([]int64, []int64, int, bool)) bool {
	inner := pairOf(g, n, op, op)
	if inner == nil {
		return false
	}
	outer, in, rank, ok := split(n, inner)
	if !ok {
		return false
	}
	merged := mergeAxes(outer, in, rank)
	if merged == nil {
		return false
	}
	setAxes(g, n, merged)
	n.SetInput(0, inner.Input(0))
	return true
}

// dropSqueezeOfUnsqueeze: Squeeze(Unsqueeze(x, a), a) → x.
func dropSqueezeOfUnsqueeze(g *graph.Graph, n *graph.Node) bool {
	inner := pairOf(g, n, "Squeeze", "Unsqueeze")
	if inner == nil {
		return false
	}
	r := n.Input(0).Type.Rank()
	a1, ok1 := axesOf(inner, r)
	a2, ok2 := axesOf(n, r)
	return ok1 && ok2 && slices.Equal(a1, a2) && bypassTo(g, n, inner.Input(0))
}

// swapWhereOfNot: Where(Not(c), a, b) → Where(c, b, a). Stage 1 states
// bool masks as keep-masks; a lowering that turns one into a bias with
// Where then reads the model's own condition directly.
func swapWhereOfNot(g *graph.Graph, n *graph.Node) bool {
	not := pairOf(g, n, "Where", "Not")
	if not == nil {
		return false
	}
	a, b := n.Input(1), n.Input(2)
	n.SetInput(0, not.Input(0))
	n.SetInput(1, b)
	n.SetInput(2, a)
	return true
}
