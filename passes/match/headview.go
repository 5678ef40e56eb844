package match

import "github.com/attnopt/attnopt/graph"

// peelHeadView handles bmm scores (B·H, Nq, Nk) viewed as (B, H, Nq, Nk) to
// be masked, as BLOOM does (its ALiBi bias is added before the view, the
// padding and causal mask after); the probabilities are viewed back before
// the product with V (outputRules). The mask terms found so far, walking
// back from the softmax, were added in that view.
func (m *matcher) peelHeadView(n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	if s.headView != nil {
		return nil, nil, reject(CodeView, n, "Reshape %q views the scores a second time", n.Label())
	}
	if len(s.QScales) > 0 {
		return nil, nil, reject(CodeView, n, "the scores are scaled per head inside the view of Reshape %q", n.Label())
	}
	view := n.Output(0).Type.Shape[:2]
	for i := range s.Masks {
		s.Masks[i].BatchView = view
	}
	for i := range s.causalTerms {
		s.causalTerms[i].term.BatchView = view
	}
	s.headView = view
	return n.Input(0), nil, nil
}

// liftHeadView makes a rank-4 site of bmm scores whose probabilities meet a
// rank-4 V in the (B, H, …) view (dynamo folds BLOOM's view back and bmm into
// one MatMul): Q and K are read before their fold into B·H, the terms added
// in the view are native, those added to the bmm scores are split.
func (m *matcher) liftHeadView(pv *graph.Node, s *draft) *Reject {
	view := s.headView
	fail := reject(CodeView, pv, "the probabilities reach %s (node %q) still in the (B, H, …) view of the scores", pv.OpType, pv.Label())
	if s.V.Type.Rank() != 4 || len(s.QScales) > 0 {
		return fail
	}
	q, ok := unfoldBatch(s.Q, view)
	if !ok {
		return fail
	}
	k, kt := s.K, s.KTransposed
	if x, ok := unfoldBatch(k, view); ok {
		k = x
	} else if p := k.Producer(); p != nil && p.Is("Transpose") && swapsLastTwo(p) {
		if k, ok = unfoldBatch(p.Input(0), view); !ok {
			return fail
		}
		kt = !kt
	} else {
		return fail
	}
	s.Q, s.K, s.KTransposed = q, k, kt
	for i, t := range s.Masks {
		s.Masks[i].BatchView, s.Masks[i].BatchFold = nil, nil
		if t.BatchView == nil {
			s.Masks[i].BatchFold = view
		}
	}
	for i, c := range s.causalTerms {
		s.causalTerms[i].term.BatchView, s.causalTerms[i].term.BatchFold = nil, nil
		if c.term.BatchView == nil {
			s.causalTerms[i].term.BatchFold = view
		}
	}
	s.headView = nil
	return nil
}

// unfoldBatch is x (A·W, …) as the rank-4 (A, W, …) tensor it was reshaped
// from.
func unfoldBatch(x *graph.Value, view []graph.Dim) (*graph.Value, bool) {
	p := x.Producer()
	if p == nil || !p.Is("Reshape") || x.Type.Rank() != 3 || p.Input(0).Type.Rank() != 4 {
		return nil, false
	}
	in := p.Input(0)
	sh := in.Type.Shape
	return in, sh[0].Equal(view[0]) && sh[1].Equal(view[1]) && sameLastTwo(in, x)
}

// splitsBatch reports whether Reshape n views rank-3 scores (X, Nq, Nk) as
// (A, W, Nq, Nk); both hold the same elements, so A·W = X.
func splitsBatch(n *graph.Node) bool {
	return viewsBatch(n, 3, 4)
}

// mergesBatch is the inverse view: (A, W, Nq, Nk) as (A·W, Nq, Nk).
func mergesBatch(n *graph.Node) bool {
	return viewsBatch(n, 4, 3)
}

func viewsBatch(n *graph.Node, from, to int) bool {
	in, out := n.Input(0), n.Output(0)
	return in != nil && out != nil && in.Type.Rank() == from && out.Type.Rank() == to && sameLastTwo(in, out)
}
