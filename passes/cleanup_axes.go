package passes

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
	var rest []int64
	for i := int64(0); i < int64(rank); i++ {
		if !slices.Contains(outer, i) {
			rest = append(rest, i)
		}
	}
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

// pairOf returns n's input producer when it is an op of the same kind read
// by n alone.
func pairOf(g *graph.Graph, n *graph.Node, op string) *graph.Node {
	if !n.Is(op) || n.Input(0) == nil {
		return nil
	}
	inner := n.Input(0).Producer()
	if inner == nil || !inner.Is(op) || len(n.Input(0).Uses()) != 1 || isGraphOutput(g, n.Input(0)) {
		return nil
	}
	return inner
}

// foldUnsqueezePair: Unsqueeze(Unsqueeze(x, a1), a2) → Unsqueeze(x, a).
func foldUnsqueezePair(g *graph.Graph, n *graph.Node) bool {
	inner := pairOf(g, n, "Unsqueeze")
	if inner == nil {
		return false
	}
	a2, ok2 := axesOf(n, n.Output(0).Type.Rank())
	a1, ok1 := axesOf(inner, inner.Output(0).Type.Rank())
	if !ok1 || !ok2 {
		return false
	}
	merged := mergeAxes(a2, a1, n.Output(0).Type.Rank())
	if merged == nil {
		return false
	}
	setAxes(g, n, merged)
	n.SetInput(0, inner.Input(0))
	return true
}

// foldSqueezePair: Squeeze(Squeeze(x, a1), a2) → Squeeze(x, a).
func foldSqueezePair(g *graph.Graph, n *graph.Node) bool {
	inner := pairOf(g, n, "Squeeze")
	if inner == nil {
		return false
	}
	r := inner.Input(0).Type.Rank()
	a1, ok1 := axesOf(inner, r)
	a2, ok2 := axesOf(n, n.Input(0).Type.Rank())
	if !ok1 || !ok2 {
		return false
	}
	merged := mergeAxes(a1, a2, r)
	if merged == nil {
		return false
	}
	setAxes(g, n, merged)
	n.SetInput(0, inner.Input(0))
	return true
}

// dropSqueezeOfUnsqueeze: Squeeze(Unsqueeze(x, a), a) → x.
func dropSqueezeOfUnsqueeze(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Squeeze") || n.Input(0) == nil {
		return false
	}
	inner := n.Input(0).Producer()
	if inner == nil || !inner.Is("Unsqueeze") || len(n.Input(0).Uses()) != 1 || isGraphOutput(g, n.Input(0)) {
		return false
	}
	r := n.Input(0).Type.Rank()
	a1, ok1 := axesOf(inner, r)
	a2, ok2 := axesOf(n, r)
	if !ok1 || !ok2 || !slices.Equal(a1, a2) {
		return false
	}
	in, out := inner.Input(0), n.Output(0)
	if isGraphOutput(g, out) && (in.Kind != graph.KindNode || isGraphOutput(g, in)) {
		return false
	}
	g.ReplaceAllUses(out, in)
	g.RemoveNode(n)
	return true
}

// swapWhereOfNot: Where(Not(c), a, b) → Where(c, b, a). Stage 1 states
// bool masks as keep-masks; a lowering that turns one into a bias with
// Where then reads the model's own condition directly.
func swapWhereOfNot(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Where") || n.Input(0) == nil {
		return false
	}
	not := n.Input(0).Producer()
	if not == nil || !not.Is("Not") || len(n.Input(0).Uses()) != 1 || isGraphOutput(g, n.Input(0)) {
		return false
	}
	a, b := n.Input(1), n.Input(2)
	n.SetInput(0, not.Input(0))
	n.SetInput(1, b)
	n.SetInput(2, a)
	return true
}
