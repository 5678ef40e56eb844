package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// scoreRules are the steps exporters put between Q·Kᵀ and the softmax, one
// entry per variant (match_rules.go).
var scoreRules = []scoreRule{
	{op: "Cast", when: (*graph.Node).IsFloatCast, peel: func(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
		s.SoftCasts = true
		return n.Input(0), nil, nil
	}},
	{op: "Mul", when: capsScores, peel: (*matcher).peelSoftcap},
	{op: "Mul", peel: peelScoreScale},
	{op: "Div", peel: peelScoreScale},
	// Keras: Add(Mul(Cast(m), s), Mul(c, Cast(Not(m)))), blend.go.
	{op: "Add", when: isBlendMask, peel: (*matcher).peelBlendMask},
	{op: "Add", peel: func(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
		x, r := m.peelAddMask(n, s)
		return x, nil, r
	}},
	// Funnel: scores − INF·(1 − mask).
	{op: "Sub", when: subtractsBias, peel: (*matcher).peelSubMask},
	{op: "Where", peel: func(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
		x, r := m.peelWhereMask(n, s)
		return x, nil, r
	}},
	// BLOOM: bmm scores viewed as (B, H, Nq, Nk) to be masked.
	{op: "Reshape", when: splitsBatch, peel: (*matcher).peelHeadView},
	{op: "Squeeze", when: splitsBatch, peel: (*matcher).peelHeadView},
	{op: "Reshape", peel: (*matcher).enterWindowView},
	// NATTEN through unfold: no product, refused with the reason (refusals.go).
	{op: "ReduceSum", peel: peelNeighbourhood},
	{op: "MatMul", product: true, peel: func(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
		return nil, nil, m.matchQKMatMul(n, s)
	}},
	{op: "Einsum", product: true, peel: func(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
		return nil, nil, m.matchQKEinsum(n, s)
	}},
}

func peelScoreScale(m *matcher, n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	x, r := m.peelScale(n, s, ScaleOnScores)
	return x, nil, r
}

// matchScoreChain walks back from the softmax input through the elementwise
// steps exporters put between Q·Kᵀ and the softmax (cast, scale, mask) to the
// score product itself. Every step's output must feed only the next step.
func (m *matcher) matchScoreChain(v *graph.Value, s *draft) ([]*graph.Node, *Reject) {
	s.Scale, s.ScaleForm = 1, 0
	var nodes []*graph.Node
	for steps := 0; ; steps++ {
		if steps > 16 {
			return nil, reject(CodeScoreChain, v, "more than 16 elementwise steps between the score product and the softmax")
		}
		p := v.Producer()
		if p == nil && s.window != nil {
			return nil, reject(CodeView, v, "the viewed scores %q do not come from a Reshape of the scores", v.Name)
		}
		if p == nil {
			return nil, reject(CodeScoreChain, v, "softmax input %q is not computed from a Q·Kᵀ product (it is a graph input or constant)", v.Name)
		}
		if r := m.onlyUse(v); r != nil {
			return nil, r
		}
		nodes = append(nodes, p)
		rules := scoreRules
		if s.window != nil {
			rules = windowRules
		}
		rule := findScoreRule(rules, p)
		if rule == nil && s.window != nil {
			return nil, reject(CodeView, p, "the viewed scores pass through %s (node %q)", p.OpType, p.Label())
		}
		if rule == nil {
			return nil, reject(CodeScoreChain, p, "the scores pass through %s (node %q), which is not a cast, scale, mask or Q·Kᵀ product", p.OpType, p.Label())
		}
		if r := capBeforeMask(p, s); r != nil {
			return nil, r
		}
		nm, nc, scale := len(s.Masks), len(s.causal.Terms), s.Scale
		next, inner, r := rule.peel(m, p, s)
		if r != nil {
			return nil, r
		}
		if scale != 1 {
			if r := scaleEarlierTerms(s, nm, nc, scale, p); r != nil {
				return nil, r
			}
		}
		nodes = append(nodes, inner...)
		if rule.product {
			return nodes, nil
		}
		v = next
	}
}

// scaleEarlierTerms: terms peeled after a scale of the scores were added
// before it, (s + t)·c, so the op adds c·t (XLNet scales ac + bd). A term
// that drops keys with −inf (or a fill that absorbs) is the same scaled;
// an additive term or a finite fill is multiplied; what the op states by
// other attributes (a finite causal fill, ALiBi's forms) is refused.
func scaleEarlierTerms(s *draft, nm, nc int, c float64, at *graph.Node) *Reject {
	if c <= 0 {
		return nil // no fused op takes that scale (stage 1 refuses it)
	}
	for i := nm; i < len(s.Masks); i++ {
		if r := scaleTerm(&s.Masks[i], c, at); r != nil {
			return r
		}
	}
	for i := nc; i < len(s.causal.Terms); i++ {
		ct := &s.causal.Terms[i]
		if ct.Fill != nil && !posmask.NegInf(*ct.Fill) || ct.Keep || ct.Rest != nil || ct.Ramp != nil {
			return reject(CodeMask, at, "a causal mask with a finite fill or a position bias is added before the scores are scaled by %g", c)
		}
		if r := scaleTerm(&ct.Term, c, at); r != nil {
			return r
		}
	}
	return nil
}

func scaleTerm(t *masks.Term, c float64, at *graph.Node) *Reject {
	switch {
	case t.Kind == masks.Bool && (t.Fill == nil || posmask.NegInf(*t.Fill)):
	case t.Kind == masks.Additive && t.Fill != nil:
		f := *t.Fill * c
		t.Fill = &f
	case t.Kind == masks.Additive && t.Ramp == nil && !t.KeyRow && t.BatchView == nil:
		t.Scale = c
		t.Floor *= c
	default:
		return reject(CodeMask, t.Value, "mask %q is added before the scores are scaled by %g (node %q)", t.Value.Name, c, at.Label())
	}
	return nil
}

// peelScale takes a Mul or Div by a constant scalar off one side of n and
// folds it into the site's scale; it returns the other operand.
func (m *matcher) peelScale(n *graph.Node, s *draft, where ScaleForm) (*graph.Value, *Reject) {
	a, b := n.Input(0), n.Input(1)
	x, c := a, b
	if _, ok := b.Scalar(); !ok && n.Is("Mul") {
		if _, ok := a.Scalar(); ok {
			x, c = b, a
		}
	}
	val, ok := c.Scalar()
	if !ok {
		if where == ScaleOnScores {
			if x, r, handled := m.peelTensorScale(n, s); handled {
				return x, r
			}
		}
		if c.Type.Ranked && c.Type.Shape.Numel().Static() && c.Type.Shape.Numel().C == 1 {
			return nil, reject(CodeScale, c, "scale %q of node %q is not a constant (it is computed from values shape inference cannot fold)", c.Name, n.Label())
		}
		if c.Const != nil || (c.Type.Ranked && len(c.Type.Shape) > 0) {
			return nil, reject(CodeScale, c, "node %q scales by %q, which is not a scalar (per-element scale)", n.Label(), c.Name)
		}
		return nil, reject(CodeScale, c, "scale %q of node %q is not a constant scalar", c.Name, n.Label())
	}
	if n.Is("Div") {
		if c == a {
			return nil, reject(CodeScale, n, "node %q divides a constant by the scores", n.Label())
		}
		if val == 0 {
			return nil, reject(CodeScale, c, "node %q divides by zero", n.Label())
		}
		val = 1 / val
	}
	s.Scale *= val
	s.ScaleForm |= where
	return x, nil
}

// matchQKMatMul records Q and Kᵀ from MatMul(Q, Kᵀ), peeling a scale on
// either side.
func (m *matcher) matchQKMatMul(n *graph.Node, s *draft) *Reject {
	s.ScoreOp = "MatMul"
	q, r := m.peelOperandScale(n.Input(0), s, ScaleOnQ)
	if r != nil {
		return r
	}
	kt, r := m.peelOperandScale(n.Input(1), s, ScaleOnK)
	if r != nil {
		return r
	}
	s.Q, s.K, s.KTransposed = q, kt, true
	return nil
}

// peelOperandScale removes Mul/Div by a scalar from an operand of the score
// product when that scaled operand feeds nothing else.
func (m *matcher) peelOperandScale(v *graph.Value, s *draft, side ScaleForm) (*graph.Value, *Reject) {
	for i := 0; i < 4; i++ {
		p := v.Producer()
		if p == nil || !(p.Is("Mul") || p.Is("Div")) || len(v.Uses()) != 1 {
			return v, nil
		}
		a, b := p.Input(0), p.Input(1)
		if a == nil || b == nil {
			return v, nil
		}
		_, okA := a.Scalar()
		_, okB := b.Scalar()
		if !okB && !(okA && p.Is("Mul")) {
			return v, nil
		}
		next, r := m.peelScale(p, s, side)
		if r != nil {
			return nil, r
		}
		s.extra = append(s.extra, p)
		v = next
	}
	return v, nil
}

// Swin adds a mask per window in a (B/w, w, H, Nq, Nk) view of the scores
// and views them back:
//
//	Reshape(Add(Reshape(x, [-1, w, H, Nq, Nk]), mask), [-1, H, Nq, Nk])
//
// Walking back, the outer Reshape enters the view (enterWindowView); inside
// it the chain follows windowRules until the inner Reshape leaves it.

// windowView is the view the score chain is in.
type windowView struct {
	outer *graph.Node
	dims  []graph.Dim // (B/w, w)
	adds  int
}

var windowRules = []scoreRule{
	{op: "Add", peel: (*matcher).peelWindowMask},
	{op: "Reshape", peel: (*matcher).leaveWindowView},
}

func (m *matcher) enterWindowView(outer *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	in5 := outer.Input(0)
	out := outer.Output(0).Type
	t5 := in5.Type
	if !out.Ranked || !t5.Ranked || len(out.Shape) != 4 || len(t5.Shape) != 5 {
		return nil, nil, reject(CodeScoreChain, outer, "the scores pass through Reshape (node %q), which is not a cast, scale, mask or Q·Kᵀ product", outer.Label())
	}
	for i := 1; i < 4; i++ {
		if !out.Shape[i].Equal(t5.Shape[i+1]) {
			return nil, nil, reject(CodeView, outer, "Reshape %q changes the score axes, not only the batch", outer.Label())
		}
	}
	s.window = &windowView{outer: outer, dims: []graph.Dim{t5.Shape[0], t5.Shape[1]}}
	return in5, nil, nil
}

func (m *matcher) peelWindowMask(p *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	if s.window.adds++; s.window.adds >= 8 {
		return nil, nil, reject(CodeView, s.window.outer, "too many steps inside the batch view of the scores")
	}
	x, bias := p.Input(0), p.Input(1)
	if scoreLike(bias) || bias.Producer() != nil && bias.Producer().Is("Reshape") && !(x.Producer() != nil && x.Producer().Is("Reshape")) {
		x, bias = bias, x
	}
	if !bias.Type.DType.IsFloat() {
		return nil, nil, reject(CodeMask, bias, "node %q adds %q of type %s to the scores", p.Label(), bias.Name, bias.Type.DType)
	}
	s.biasInputs = append(s.biasInputs, bias)
	s.Masks = append(s.Masks, masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormWindowView, BatchView: s.window.dims})
	if len(s.Masks) == 1 {
		s.maskForm = s.Masks[0].Form
	}
	return x, nil, nil
}

func (m *matcher) leaveWindowView(p *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	x, out := p.Input(0), s.window.outer.Output(0).Type
	if !x.Type.Ranked || len(x.Type.Shape) != 4 {
		return nil, nil, reject(CodeView, p, "Reshape %q does not view rank-4 scores", p.Label())
	}
	// The trailing dims must match; the batch then matches too, since both
	// views hold the same elements (it may be unknown).
	for i := 1; i < len(out.Shape); i++ {
		if !x.Type.Shape[i].Equal(out.Shape[i]) {
			return nil, nil, reject(CodeView, p, "Reshape %q and %q are not a view and its inverse", p.Label(), s.window.outer.Label())
		}
	}
	s.window = nil
	return x, nil, nil
}
