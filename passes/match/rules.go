package match

import "github.com/attnopt/attnopt/graph"

// The matcher's families walk a chain of nodes one step at a time; each step
// is one entry of a rule table (scoreRules, outputRules, viewRules): the op
// it matches, an optional condition, and the peel that takes the step. The
// mask a step applies is one entry of addForms or whereForms, whose take
// both tests and records it. A variant is one entry; the first entry that
// holds runs, and the table's fallback rejection names the node when none
// does.

// scoreRule is one step back from the softmax towards Q·Kᵀ; n produces the
// current score tensor.
type scoreRule struct {
	op   string
	when func(n *graph.Node) bool // nil: every n of op
	// peel returns the score tensor before n, with any nodes it took besides
	// n; a rule with product set ends the chain and returns no value.
	peel    func(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject)
	product bool
}

func findScoreRule(rules []scoreRule, n *graph.Node) *scoreRule {
	for i, r := range rules {
		if n.Is(r.op) && (r.when == nil || r.when(n)) {
			return &rules[i]
		}
	}
	return nil
}

// outputRule is one step from the probabilities towards their product with
// V; n reads the current probabilities as its input idx.
type outputRule struct {
	op   string
	when func(m *matcher, n *graph.Node, idx int, s *draft) bool // nil: every n of op
	// peel returns the probabilities after n, with the nodes it took
	// besides n; a rule with product set ends the chain.
	peel    func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject)
	product bool
}

func findOutputRule(rules []outputRule, m *matcher, n *graph.Node, idx int, s *draft) *outputRule {
	for i, r := range rules {
		if n.Is(r.op) && (r.when == nil || r.when(m, n, idx, s)) {
			return &rules[i]
		}
	}
	return nil
}

// viewRule is one layout view exporters put around K and V that keeps their
// (…, N, D) order, so the tensor before it is the same K or V: a Transpose
// of the last two axes (swap), a Reshape that only regroups leading dims, or
// a Cast that widens a float (cast: fp16 TorchScript SDPA computes P·V on
// float32 V, cast after the head repeat; the repeat commutes with it, and
// matchVType reads the uncast V anyway).
type viewRule struct {
	op      string
	when    func(n *graph.Node) bool
	swap    bool
	reshape bool
	cast    bool
}

var viewRules = []viewRule{
	{op: "Transpose", when: swapsLastTwo, swap: true},
	{op: "Reshape", when: func(n *graph.Node) bool { return sameLastTwo(n.Input(0), n.Output(0)) }, reshape: true},
	{op: "Cast", when: widensFloat, cast: true},
}

// widensFloat reports whether n casts a float to a float at least as wide,
// which loses nothing.
func widensFloat(n *graph.Node) bool {
	from := n.Input(0).Type.DType
	return n.IsFloatCast() && from.IsFloat() && graph.DType(n.AttrInt("to", 0)).Bits() >= from.Bits()
}

// viewStep is the view rule x's producer matches, and that producer's input.
func viewStep(x *graph.Value) (*graph.Value, *viewRule) {
	p := x.Producer()
	if p == nil {
		return nil, nil
	}
	for i, r := range viewRules {
		if p.Is(r.op) && r.when(p) {
			return p.Input(0), &viewRules[i]
		}
	}
	return nil, nil
}

// maskForm is one form of the tensor an Add puts on the scores, or of a
// Where's condition and fill: take records it on s and reports whether the
// form applies. The forms of a family are tried in order, the first that
// takes the term wins; the last one takes every term.
type maskForm[T any] struct {
	take func(m *matcher, n *graph.Node, t T, s *draft) (bool, *Reject)
}

// takeMask records t in the first form of forms that takes it.
func takeMask[T any](m *matcher, forms []maskForm[T], n *graph.Node, t T, s *draft) *Reject {
	for _, f := range forms {
		if ok, r := f.take(m, n, t, s); ok || r != nil {
			return r
		}
	}
	return nil
}
