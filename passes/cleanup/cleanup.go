// Package cleanup cancels the layout ops a rewrite inserts next to the
// model's own: Transpose/Reshape pairs (here), Unsqueeze/Squeeze pairs
// (axes.go) and per-part Transposes of a packed projection (sink.go). Each
// rule is one small function; Layout applies them to a fixed point. It
// reads and edits the graph only, so it sits on the lowest floor of
// passes/ (passes/layers_test.go).
package cleanup

import (
	"github.com/attnopt/attnopt/graph"
)

var cleanupRules = []func(g *graph.Graph, n *graph.Node) bool{
	foldTransposePair, dropIdentityTranspose, foldReshapePair, dropNoopReshape,
	foldUnsqueezePair, foldSqueezePair, dropSqueezeOfUnsqueeze, swapWhereOfNot,
	sinkTransposeThroughSqueeze, hoistTransposeAboveParts, mergeSameTranspose,
}

// Layout applies the rules to a fixed point; folds counts the rewrites it
// made, removed the dead nodes it dropped on the way.
func Layout(g *graph.Graph) (folds, removed int, err error) {
	for changed := true; changed; {
		changed = false
		// The replaced site's nodes die first: while they still read the
		// model's own layout ops, those ops look shared and a pair such as
		// Transpose(Transpose(k)) would not fold.
		removed += g.RemoveDead()
		if err := g.Sort(); err != nil {
			return folds, removed, err
		}
		for _, n := range append([]*graph.Node(nil), g.Nodes...) {
			if !inGraph(g, n) {
				continue
			}
			for _, rule := range cleanupRules {
				if rule(g, n) {
					changed = true
					folds++
					break
				}
			}
		}
	}
	removed += g.RemoveDead()
	return folds, removed, nil
}

func inGraph(g *graph.Graph, n *graph.Node) bool {
	for _, m := range g.Nodes {
		if m == n {
			return true
		}
	}
	return false
}

func permOf(n *graph.Node) []int64 {
	if p := n.AttrInts("perm"); p != nil {
		return p
	}
	r := n.Input(0).Type.Rank()
	if r < 0 {
		return nil
	}
	p := make([]int64, r)
	for i := range p {
		p[i] = int64(r - 1 - i)
	}
	return p
}

// foldTransposePair: Transpose(Transpose(x, p1), p2) → Transpose(x, p1∘p2)
// when the inner one has no other reader.
func foldTransposePair(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Transpose") || n.Input(0) == nil {
		return false
	}
	inner := n.Input(0).Producer()
	if inner == nil || !inner.Is("Transpose") || len(n.Input(0).Uses()) != 1 || isGraphOutput(g, n.Input(0)) {
		return false
	}
	p1, p2 := permOf(inner), permOf(n)
	if p1 == nil || p2 == nil || len(p1) != len(p2) {
		return false
	}
	comp := make([]int64, len(p2))
	for i, p := range p2 {
		comp[i] = p1[p]
	}
	n.SetInput(0, inner.Input(0))
	n.SetAttr(graph.IntsAttr("perm", comp))
	return true
}

// dropIdentityTranspose: Transpose(x, identity) → x.
func dropIdentityTranspose(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Transpose") {
		return false
	}
	p := permOf(n)
	if p == nil {
		return false
	}
	for i, x := range p {
		if x != int64(i) {
			return false
		}
	}
	return bypass(g, n)
}

// bypass makes n's readers read n's input and removes n. A graph output
// keeps its name (ReplaceAllUses renames), so only values that are not
// graph inputs can take an output's place.
func bypass(g *graph.Graph, n *graph.Node) bool { return bypassTo(g, n, n.Input(0)) }

// bypassTo makes n's readers read in and removes n.
func bypassTo(g *graph.Graph, n *graph.Node, in *graph.Value) bool {
	out := n.Output(0)
	if isGraphOutput(g, out) && (in.Kind != graph.KindNode || isGraphOutput(g, in)) {
		return false
	}
	g.ReplaceAllUses(out, in)
	g.RemoveNode(n)
	return true
}

func isGraphOutput(g *graph.Graph, v *graph.Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

// foldReshapePair: Reshape(Reshape(x, s1), s2) → Reshape(x, s2) when s2 has
// no 0 entry (0 copies a dim of the input, which would change meaning).
func foldReshapePair(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Reshape") || n.Input(1) == nil {
		return false
	}
	inner := n.Input(0).Producer()
	if inner == nil || !inner.Is("Reshape") || len(n.Input(0).Uses()) != 1 || isGraphOutput(g, n.Input(0)) {
		return false
	}
	target, ok := n.Input(1).IntContent()
	if !ok {
		return false
	}
	// A 0 entry copies dim i of the intermediate; it still means the same
	// when x has that same dim at i.
	mid, x := n.Input(0).Type, inner.Input(0).Type
	for i, d := range target {
		if d.Static() && d.C == 0 {
			if n.AttrInt("allowzero", 0) == 1 || !mid.Ranked || !x.Ranked || i >= len(mid.Shape) || i >= len(x.Shape) || !mid.Shape[i].Equal(x.Shape[i]) {
				return false
			}
		}
	}
	n.SetInput(0, inner.Input(0))
	return true
}

// dropNoopReshape: Reshape(x, s) whose output shape provably equals x's.
func dropNoopReshape(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Reshape") {
		return false
	}
	in, out := n.Input(0).Type, n.Output(0).Type
	if !in.Ranked || !out.Ranked || len(in.Shape) != len(out.Shape) {
		return false
	}
	for i := range in.Shape {
		if !in.Shape[i].Equal(out.Shape[i]) {
			return false
		}
	}
	return bypass(g, n)
}
