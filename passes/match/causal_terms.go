package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
	"github.com/attnopt/attnopt/passes/match/resolve"
)

// maskLeaf is one term of a combined mask: an additive bias, or a bool
// condition (true = keep unless inverted).
type maskLeaf struct {
	v        *graph.Value
	bias     bool
	inverted bool
	// fill is what a bool leaf's Where adds to the keys it drops (nil:
	// −inf); leaves of one group (one Where over an And, or a Min) share
	// it once (match_fills.go).
	fill  *float64
	group *graph.Node
}

// biasLeaves splits an additive mask into terms that add up to it: Add of
// biases, Where(c, x, −inf) = x + Where(c, 0, −inf), Min of non-positive
// biases (min of a 0/−inf term and b ≤ 0 is their sum), and
// Where(c, 0, −inf) of And-combined conditions.
func biasLeaves(v *graph.Value, depth int) []maskLeaf {
	p := v.Producer()
	if p == nil || depth > 8 {
		return []maskLeaf{{v: v, bias: true}}
	}
	switch {
	case p.Is("Add"):
		return append(biasLeaves(p.Input(0), depth+1), biasLeaves(p.Input(1), depth+1)...)
	case p.Is("Min") && len(p.Inputs) == 2 && nonPositive(p.Input(0), 0) && nonPositive(p.Input(1), 0):
		// min of two drop terms drops a key once: one group.
		return inGroup(append(biasLeaves(p.Input(0), depth+1), biasLeaves(p.Input(1), depth+1)...), p)
	case p.Is("Where"):
		if cond, inv, ok := posmask.BoolMaskOfWhere(p); ok {
			return withFill(condLeaves(cond, inv, depth+1), masks.FiniteFill(whereFill(p)), p)
		}
		for i := 1; i <= 2; i++ {
			if c, ok := p.Input(i).Scalar(); ok && posmask.NegInf(c) {
				if _, ok := p.Input(3 - i).Scalar(); ok {
					break
				}
				// Where(c, x, −inf): keep x where c; Where(c, −inf, x): where not c.
				conds := withFill(condLeaves(p.Input(0), i == 1, depth+1), masks.FiniteFill(c), p)
				return append(nestedFill(biasLeaves(p.Input(3-i), depth+1), p.Input(3-i), c, p), conds...)
			}
		}
	}
	return []maskLeaf{{v: v, bias: true}}
}

// withFill gives bool leaves the fill of the Where that applied them, as
// one group.
func withFill(ls []maskLeaf, fill *float64, group *graph.Node) []maskLeaf {
	for i := range ls {
		if !ls[i].bias {
			ls[i].fill = fill
		}
		ls[i].group = group
	}
	return ls
}

// nestedFill joins to group the bool leaves of an inner Where(c2, fill, y)
// that fills like the outer one: Where(c1, f, Where(c2, f, y)) drops a key
// both drop with f once (llm-foundry's masked_fill of causal, then padding).
// A constant bias x of Where(c, f, x) that drops with f joins too (dynamo's
// fold of ALiBi and causal, then padding).
func nestedFill(ls []maskLeaf, x *graph.Value, fill float64, group *graph.Node) []maskLeaf {
	inner := x.Producer()
	for i, l := range ls {
		switch {
		case inner != nil && l.group == inner && !l.bias && masks.FillValue(l.fill) == fill:
			ls[i].group = group
		case l.group == nil && l.bias && l.v == x && x.Const != nil:
			if f, ok := dropValue(x.Const); ok && masks.FillValue(f) == fill {
				ls[i].group = group
			}
		}
	}
	return ls
}

// inGroup puts leaves that have no group yet into group.
func inGroup(ls []maskLeaf, group *graph.Node) []maskLeaf {
	for i := range ls {
		if ls[i].group == nil {
			ls[i].group = group
		}
	}
	return ls
}

// leafFill is what a leaf adds to the keys it drops.
func leafFill(l maskLeaf) *float64 {
	if !l.bias {
		return l.fill
	}
	f, _ := biasDropFill(l.v, 0)
	return f
}

// sharesFill reports whether another leaf that drops keys is in c's group.
func sharesFill(leaves []maskLeaf, c int) bool {
	if leaves[c].group == nil {
		return false
	}
	for i, l := range leaves {
		if i != c && l.group == leaves[c].group && !keepsAll(l) {
			return true
		}
	}
	return false
}

// keepsAll reports a leaf that keeps every key (a zero bias, an all-true
// condition).
func keepsAll(l maskLeaf) bool {
	return (l.bias && isZeroTensor(l.v)) || (!l.bias && posmask.FilledWith(l.v, func(x float64) bool { return (x != 0) != l.inverted }))
}

// condLeaves splits a keep condition And(a, b) (or a drop condition
// Or(a, b)) into its operands.
func condLeaves(c *graph.Value, inverted bool, depth int) []maskLeaf {
	p := c.Producer()
	switch {
	case p == nil || depth > 8:
	case (!inverted && p.Is("And")) || (inverted && p.Is("Or")):
		return append(condLeaves(p.Input(0), inverted, depth+1), condLeaves(p.Input(1), inverted, depth+1)...)
	case p.Is("Expand"):
		// The broadcast is redone by the op: each term of the expanded
		// condition broadcasts to the scores as well.
		return condLeaves(p.Input(0), inverted, depth+1)
	case posmask.IsNoopSlice(p):
		return condLeaves(p.Input(0), inverted, depth+1)
	case p.Is("Cast") && p.Input(0).Type.DType == graph.Bool && graph.DType(p.AttrInt("to", 0)) == graph.Bool:
		return condLeaves(p.Input(0), inverted, depth+1)
	case p.Is("Cast") && graph.DType(p.AttrInt("to", 0)) == graph.Bool:
		// bool(Where(c, 0, fill)) of an additive mask is true where it
		// drops (transformers' MPT: eager_mask(…).to(bool)).
		if w := p.Input(0).Producer(); w != nil && w.Is("Where") {
			if cond, inv, ok := posmask.BoolMaskOfWhere(w); ok {
				return condLeaves(cond, inverted == inv, depth+1)
			}
		}
	}
	return []maskLeaf{{v: c, inverted: inverted}}
}

// nonPositive reports whether a bias provably holds no positive value.
func nonPositive(v *graph.Value, depth int) bool {
	if f, ok := v.Floats(); ok {
		for _, x := range f {
			if x > 0 {
				return false
			}
		}
		return true
	}
	p := v.Producer()
	switch {
	case p == nil || depth > 8:
		return false
	case p.Is("Where"):
		x, okX := p.Input(1).Scalar()
		y, okY := p.Input(2).Scalar()
		return okX && okY && x <= 0 && y <= 0
	case p.Is("Min"):
		return nonPositive(p.Input(0), depth+1) || nonPositive(p.Input(1), depth+1)
	case p.Is("Add"):
		return nonPositive(p.Input(0), depth+1) && nonPositive(p.Input(1), depth+1)
	case p.Is("Mul"):
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && c <= 0 && posmask.ZeroOne(p.Input(i), depth+1) {
				return true
			}
		}
	case p.IsFloatCast():
		return nonPositive(p.Input(0), depth+1)
	}
	_, ok := posmask.BiasTri(v, depth+1)
	return ok
}

// leafPattern is the triangular keep pattern of a leaf, if it has one.
func leafPattern(l maskLeaf) (posmask.Tri, bool) {
	if l.bias {
		return posmask.BiasTri(l.v, 0)
	}
	t, ok := posmask.BoolTri(l.v, 0)
	if l.inverted {
		t = t.Flip()
	}
	return t, ok
}

// leafTri is the keep pattern of a leaf when it is causal.
func leafTri(l maskLeaf) (posmask.Tri, bool) {
	t, ok := leafPattern(l)
	return t, ok && !t.Neg
}

// peelCausalLeaves records the leaves of a mask when at least one is
// causal: those as candidates for `causal`, the rest as ordinary terms
// built by term. It reports false, recording nothing, otherwise.
func (m *matcher) peelCausalLeaves(s *draft, leaves []maskLeaf, term func(maskLeaf) masks.Term) bool {
	found := false
	for _, l := range leaves {
		_, ok1 := leafTri(l)
		_, ok2 := biasDropTri(l)
		_, _, ok3 := posmask.LeafBand(l.v, l.bias, l.inverted)
		found = found || ok1 || ok2 || ok3
	}
	if !found {
		return false
	}
	c := &s.causal
	for i, l := range leaves {
		if keepsAll(l) {
			continue
		}
		if t, band, ok := posmask.LeafBand(l.v, l.bias, l.inverted); ok {
			// Causal and the band in one term: causal when it fits, and a
			// mask until the window states the band too.
			c.Terms = append(c.Terms, resolve.Candidate{Tri: t, Value: l.v, Term: term(l), Fill: leafFill(l), Once: sharesFill(leaves, i), Band: true})
			c.Band = &resolve.Candidate{Tri: band, Value: l.v, Term: term(l), Fill: leafFill(l)}
			continue
		}
		if t, ok := leafTri(l); ok {
			c.Terms = append(c.Terms, resolve.Candidate{Tri: t, Value: l.v, Term: term(l), Fill: leafFill(l), Once: sharesFill(leaves, i)})
			continue
		}
		if t, fill, rest, ok := alibiConst(l); ok && l.bias {
			c.Terms = append(c.Terms, resolve.Candidate{Tri: t, Value: l.v, Term: term(l), Fill: fill, Once: sharesFill(leaves, i), Rest: &rest})
			continue
		}
		if t, ok := biasDropTri(l); ok {
			// The bias keeps its own fill as a mask; the skipped keys add
			// nothing more.
			c.Terms = append(c.Terms, resolve.Candidate{Tri: t, Value: l.v, Term: term(l), Keep: true})
			continue
		}
		if r, ok := alibiRampOf(l.v); ok && l.bias {
			c.Terms = append(c.Terms, resolve.Candidate{Value: l.v, Term: term(l), Ramp: &r})
			continue
		}
		if r, ok := alibiRowOf(l); ok {
			c.Terms = append(c.Terms, resolve.Candidate{Value: l.v, Term: term(l), Ramp: &r})
			continue
		}
		if t, ok := leafPattern(l); ok && t.Neg {
			// Keys j > i + off: with the causal term, a sliding window.
			c.Band = &resolve.Candidate{Tri: t, Value: l.v, Term: term(l), Fill: leafFill(l)}
		}
		m.addMask(s, term(l))
	}
	return true
}

// biasDropTri reads a constant bias that drops (≤ −1e30) exactly the keys
// above a triangle and holds finite values elsewhere: a relative-position
// bias with the causal mask folded in (T5 under dynamo). The op can then
// skip the dropped keys while the bias stays its mask.
func biasDropTri(l maskLeaf) (posmask.Tri, bool) {
	if !l.bias || l.v.Const == nil || !l.v.Const.DType.IsFloat() {
		return posmask.Tri{}, false
	}
	t, ok := posmask.ConstTri(l.v.Const, func(x float64) bool { return !posmask.NegInf(x) })
	return t, ok && !t.Neg
}

// peelCausalBias handles scores + bias where the bias has a causal term.
func (m *matcher) peelCausalBias(bias *graph.Value, s *draft) bool {
	leaves := biasLeaves(bias, 0)
	return m.peelCausalLeaves(s, leaves, func(l maskLeaf) masks.Term {
		if l.bias {
			return masks.Term{Kind: masks.Additive, Value: l.v, Form: masks.FormAdd}
		}
		return masks.Term{Kind: masks.Bool, Value: l.v, Inverted: l.inverted, Fill: l.fill, Form: masks.FormAddWhere}
	})
}

// peelCausalCond handles Where(cond, scores, fill) (or the inverted form)
// where cond has a causal term. A finite fill stays an additive mask for the
// other terms, as in peelWhereMask.
func (m *matcher) peelCausalCond(cond *graph.Value, inverted bool, fill float64, s *draft) bool {
	// One fill for every leaf of the condition: a key several drop gets it once.
	leaves := withFill(condLeaves(cond, inverted, 0), masks.FiniteFill(fill), cond.Producer())
	return m.peelCausalLeaves(s, leaves, func(l maskLeaf) masks.Term {
		t := masks.Term{Kind: masks.Bool, Value: l.v, Inverted: l.inverted, Fill: masks.FiniteFill(fill), Form: masks.FormWhere}
		if !posmask.NegInf(fill) {
			t.Kind = masks.Additive
		}
		return t
	})
}
