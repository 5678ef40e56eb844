package match

import "github.com/attnopt/attnopt/graph"

// Attention that is not a site by design, refused with the reason
// (docs/cli.md "What counts as a site"): the source already avoids the
// N×N scores, or scores something no fused op takes.

// probSparse finds Informer's ProbSparse attention before the score chain
// is walked: the scores are computed for the queries TopK selects (a
// Gather whose indices come from TopK, a few steps before the softmax).
// A MoE router's TopK lies further back than these few steps.
func probSparse(sm *graph.Node) *Reject {
	seen := map[*graph.Node]bool{}
	frontier := []*graph.Value{sm.Input(0)}
	for depth := 0; depth < 6 && len(frontier) > 0; depth++ {
		var next []*graph.Value
		for _, v := range frontier {
			if v == nil {
				continue // an omitted optional input
			}
			p := v.Producer()
			if p == nil || seen[p] {
				continue
			}
			seen[p] = true
			if p.Is("Gather") && fromTopK(p.Input(1), 4) {
				return reject(CodeProduct, p, "the scores are computed for the queries TopK selects (ProbSparse attention, as Informer's): not every query is scored, which no fused op expresses, and the source already skips the rest")
			}
			next = append(next, p.Inputs...)
		}
		frontier = next
	}
	return nil
}

// fromTopK says v is computed from TopK's indices within depth steps.
func fromTopK(v *graph.Value, depth int) bool {
	if v == nil || depth < 0 {
		return false
	}
	p := v.Producer()
	if p == nil {
		return false
	}
	if p.Is("TopK") {
		return len(p.Outputs) > 1 && p.Outputs[1] == v
	}
	for _, in := range p.Inputs {
		if fromTopK(in, depth-1) {
			return true
		}
	}
	return false
}

// peelNeighbourhood refuses scores made by summing a product over the head
// dim (NATTEN-style neighbourhood attention through unfold: each query's
// own gathered keys); there is no Q·Kᵀ product.
func peelNeighbourhood(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	return nil, nil, reject(CodeProduct, n, "the scores are a ReduceSum of a product (node %q): each query scores its own gathered keys (neighbourhood attention, as NATTEN's through unfold), not a Q·Kᵀ product a fused op takes, and the source already scores only those keys", n.Label())
}
