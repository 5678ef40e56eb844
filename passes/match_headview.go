package passes

import "github.com/attnopt/attnopt/graph"

// peelHeadView handles bmm scores (B·H, Nq, Nk) viewed as (B, H, Nq, Nk) to
// be masked, as BLOOM does (its ALiBi bias is added before the view, the
// padding and causal mask after); the probabilities are viewed back before
// the product with V (outputRules). The mask terms found so far, walking
// back from the softmax, were added in that view.
func (m *matcher) peelHeadView(n *graph.Node, s *Site) (*graph.Value, []*graph.Node, *Reject) {
	if s.headView {
		return nil, nil, reject(n.Label(), "Reshape %q views the scores a second time", n.Label())
	}
	if len(s.QScales) > 0 {
		return nil, nil, reject(n.Label(), "the scores are scaled per head inside the view of Reshape %q", n.Label())
	}
	view := n.Output(0).Type.Shape[:2]
	for i := range s.Masks {
		s.Masks[i].BatchView = view
	}
	for i := range s.causalTerms {
		s.causalTerms[i].term.BatchView = view
	}
	s.headView = true
	return n.Input(0), nil, nil
}

// splitsBatch reports whether Reshape n views rank-3 scores (X, Nq, Nk) as
// (A, W, Nq, Nk); both hold the same elements, so A·W = X.
func splitsBatch(n *graph.Node) bool {
	return n.Input(0).Type.Rank() == 3 && n.Output(0).Type.Rank() == 4 && sameLastTwo(n.Input(0), n.Output(0))
}

// mergesBatch is the inverse view: (A, W, Nq, Nk) as (A·W, Nq, Nk).
func mergesBatch(n *graph.Node) bool {
	return n.Input(0).Type.Rank() == 4 && n.Output(0).Type.Rank() == 3 && sameLastTwo(n.Input(0), n.Output(0))
}
