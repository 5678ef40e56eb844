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
	start, chain, _ := viewBack(n)
	for _, c := range chain {
		if r := m.onlyUse(c.Output(0)); r != nil {
			return nil, nil, r
		}
	}
	view := n.Output(0).Type.Shape[:2]
	for i := range s.Masks {
		s.Masks[i].BatchView = view
	}
	for i := range s.causal.Terms {
		s.causal.Terms[i].Term.BatchView = view
	}
	s.headView = view
	return start, chain, nil
}

// liftHeadView makes a rank-4 site of bmm scores whose probabilities meet a
// rank-4 V in the (B, H, …) view (dynamo folds BLOOM's view back and bmm into
// one MatMul): Q and K are read before their fold into B·H, the terms added
// in the view are native, those added to the bmm scores are split.
func (m *matcher) liftHeadView(pv *graph.Node, s *draft) *Reject {
	view := s.headView
	fail := reject(CodeView, pv, "the probabilities reach %s (node %q) still in the (B, H, …) view of the scores", pv.OpType, pv.Label())
	if s.V.Type.Rank() != 4 || len(s.QScales) > 0 || s.Perm.Any() {
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
	for i, c := range s.causal.Terms {
		s.causal.Terms[i].Term.BatchView, s.causal.Terms[i].Term.BatchFold = nil, nil
		if c.Term.BatchView == nil {
			s.causal.Terms[i].Term.BatchFold = view
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

// splitsBatch reports whether n ends a view of rank-3 scores (X, Nq, Nk) as
// (A, W, Nq, Nk): one Reshape (BLOOM), or a Reshape to (A, W, Nq, Nk, 1)
// and a Squeeze (tf2onnx's Keras); both hold the same elements, so A·W = X.
func splitsBatch(n *graph.Node) bool {
	_, _, ok := viewBack(n)
	return ok
}

// viewOps compose the views: they move no element.
func isViewOp(n *graph.Node) bool {
	return n != nil && (n.Is("Reshape") || n.Is("Squeeze") || n.Is("Unsqueeze"))
}

// viewBack walks from n back through view ops to the rank-3 scores the
// chain views as n's rank-4 output; nodes are the chain's besides n. Every
// value inside the chain is read by the chain only.
func viewBack(n *graph.Node) (start *graph.Value, nodes []*graph.Node, ok bool) {
	out := n.Output(0)
	if !isViewOp(n) || out.Type.Rank() != 4 {
		return nil, nil, false
	}
	reshaped := n.Is("Reshape")
	for x := n; len(nodes) < 4; {
		in := x.Input(0)
		if in.Type.Rank() == 3 {
			return in, nodes, reshaped && sameLastTwo(in, out)
		}
		p := in.Producer()
		if !isViewOp(p) || len(dataUses(in)) != 1 {
			return nil, nil, false
		}
		reshaped = reshaped || p.Is("Reshape")
		nodes = append(nodes, p)
		x = p
	}
	return nil, nil, false
}

// viewForward walks from n, which reads the rank-4 probabilities p, through
// view ops to the rank-3 (A·W, Nq, Nk) value the chain views them as (the
// inverse of viewBack; tf2onnx's Unsqueeze then Reshape); nodes are the
// chain's besides n.
func (m *matcher) viewForward(n *graph.Node, p *graph.Value) (end *graph.Value, nodes []*graph.Node, ok bool) {
	if !isViewOp(n) || p.Type.Rank() != 4 {
		return nil, nil, false
	}
	reshaped := n.Is("Reshape")
	for x := n; len(nodes) < 4; {
		out := x.Output(0)
		if out.Type.Rank() == 3 {
			// Shape readers of the chain's values are stage 1's to replace
			// (passes/canonical/replace.go shapeReaders).
			return out, nodes, reshaped && sameLastTwo(p, out)
		}
		uses := dataUses(out)
		if len(uses) != 1 || !isViewOp(uses[0].Node) || uses[0].Index != 0 || m.isGraphOutput(out) {
			return nil, nil, false
		}
		x = uses[0].Node
		reshaped = reshaped || x.Is("Reshape")
		nodes = append(nodes, x)
	}
	return nil, nil, false
}

// mergesHeadView is the output rule's guard: n starts the view of the
// probabilities back to the bmm's (A·W, Nq, Nk).
func mergesHeadView(m *matcher, n *graph.Node, idx int, s *draft) bool {
	if idx != 0 || s.headView == nil {
		return false
	}
	_, _, ok := m.viewForward(n, n.Input(0))
	return ok
}

func (m *matcher) leaveHeadView(n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	end, nodes, _ := m.viewForward(n, n.Input(0))
	s.headView = nil
	return end, nodes, nil
}

// isGraphOutput says v is one of the graph's outputs.
func (m *matcher) isGraphOutput(v *graph.Value) bool {
	for _, o := range m.g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}
