package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
)

// jax2onnx lowers a masked jax.nn.dot_product_attention (what flax's
// MultiHeadAttention calls) by masking after the softmax and renormalising:
//
//	x = Mul(P, Cast(mask))                       mask bool, true = attend
//	z = ReduceSum(x, axes=[last], keepdims=1)
//	g = Greater(z, 0)
//	P' = Where(g, Div(x, Where(g, z, c)), 0)     c ≠ 0
//
// P'_j = m_j·e^{s_j} / Σ_k m_k·e^{s_k}: the softmax over the kept keys, and
// zeros on a row that keeps none. That is Where(mask, s, -inf) before the
// softmax with the zero-row guard, which the fused op computes directly
// (without the underflow of kept keys far below a dropped key's maximum,
// where the source's sum reaches 0 and it returns zeros).

// renormMask recognises the chain on p, the softmax output; it returns the
// nodes it covers, the mask condition and P', or nil.
func renormMask(p *graph.Value) (nodes []*graph.Node, cond *graph.Value, out *graph.Value) {
	uses := dataUses(p)
	if len(uses) != 1 || !uses[0].Node.Is("Mul") {
		return nil, nil, nil
	}
	mul := uses[0].Node
	c := mul.Input(1 - uses[0].Index)
	cast := c.Producer()
	if !cast.IsFloatCast() || cast.Input(0).Type.DType != graph.Bool {
		return nil, nil, nil
	}
	x := mul.Output(0)
	var sum, div *graph.Node
	for _, u := range dataUses(x) {
		switch {
		case u.Node.Is("ReduceSum") && u.Index == 0 && reducesLastKeep(u.Node, x):
			sum = u.Node
		case u.Node.Is("Div") && u.Index == 0:
			div = u.Node
		default:
			return nil, nil, nil
		}
	}
	if sum == nil || div == nil || len(dataUses(x)) != 2 {
		return nil, nil, nil
	}
	z := sum.Output(0)
	denom := div.Input(1).Producer()
	if denom == nil || !denom.Is("Where") || denom.Input(1) != z {
		return nil, nil, nil
	}
	if c, ok := denom.Input(2).Scalar(); !ok || c == 0 || math.IsInf(c, 0) || math.IsNaN(c) {
		return nil, nil, nil
	}
	g := denom.Input(0)
	gt := g.Producer()
	if gt == nil || !gt.Is("Greater") || gt.Input(0) != z {
		return nil, nil, nil
	}
	if zero, ok := gt.Input(1).Scalar(); !ok || zero != 0 {
		return nil, nil, nil
	}
	du := dataUses(div.Output(0))
	if len(du) != 1 || !du[0].Node.Is("Where") || du[0].Index != 1 {
		return nil, nil, nil
	}
	guard := du[0].Node
	if guard.Input(0) != g {
		return nil, nil, nil
	}
	if zero, ok := guard.Input(2).Scalar(); !ok || zero != 0 {
		return nil, nil, nil
	}
	// Every intermediate is read only inside the chain.
	inside := map[*graph.Node]bool{mul: true, sum: true, gt: true, denom: true, div: true, guard: true}
	for _, n := range []*graph.Node{mul, sum, gt, denom, div} {
		for _, u := range dataUses(n.Output(0)) {
			if !inside[u.Node] {
				return nil, nil, nil
			}
		}
	}
	return []*graph.Node{mul, sum, gt, denom, div, guard}, cast.Input(0), guard.Output(0)
}

// reducesLastKeep says a ReduceSum of x sums its last axis only and keeps
// it: axes from the attribute (opset < 13) or the constant second input.
func reducesLastKeep(n *graph.Node, x *graph.Value) bool {
	if n.AttrInt("keepdims", 1) != 1 || !x.Type.Ranked {
		return false
	}
	axes := n.AttrInts("axes")
	if in := n.Input(1); in != nil {
		a, ok := in.Ints()
		if !ok {
			return false
		}
		axes = a
	}
	r := int64(x.Type.Rank())
	return len(axes) == 1 && (axes[0] == r-1 || axes[0] == -1)
}

// peelRenormMask takes the chain's mask as Where(mask, s, -inf) on the
// scores, through the same forms (a causal condition becomes causal), and
// the guard's zeros for rows that keep no key.
func (m *matcher) peelRenormMask(n *graph.Node, cond *graph.Value, s *draft) *Reject {
	before := len(s.Masks)
	if r := takeMask(m, whereForms, n, whereTerm{cond: cond, fill: math.Inf(-1)}, s); r != nil {
		return r
	}
	for i := before; i < len(s.Masks); i++ {
		s.Masks[i].Form = masks.FormRenorm
	}
	if len(s.Masks) > 0 && before == 0 {
		s.maskForm = s.Masks[0].Form
	}
	s.ZeroRowGuard = true
	return nil
}
