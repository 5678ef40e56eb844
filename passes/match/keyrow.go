package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// A padding mask is often built as a full (…, Nq, Nk) plane that is the same
// in every query row: jax2onnx's make_attention_mask is And(ones (B, Nq, 1),
// pad (B, 1, Nk)), dynamo expands HF's key mask before combining it. The
// fused op needs only one row of it: sameRowTerms finds such terms, the
// "same-rows" fix-up marks them SameRows, and stage 1 builds that row alone
// (passes/canonical/samerows.go rowOf), so no N×N mask is built for, or
// read by, the fused op.

// sameRowTerms are the indexes of the mask terms whose value provably does
// not vary along the query axis.
func sameRowTerms(s *draft) []int {
	var same []int
	for i, t := range s.Masks {
		if t.KeyRow || t.SameRows || t.Ramp != nil || t.BatchView != nil || t.BatchFold != nil || t.Placeholder || !t.Value.Type.Ranked {
			continue
		}
		sh := t.Value.Type.Shape
		if len(sh) < 2 || sh[len(sh)-2].Equal(graph.D(1)) {
			continue
		}
		if invariantAlong(t.Value, 1, 0) {
			same = append(same, i)
		}
	}
	return same
}

// elementwise ops whose output at an index depends only on their inputs at
// the (broadcast) same index.
var elementwise = map[string]bool{
	"Cast": true, "Not": true, "And": true, "Or": true, "Xor": true, "Equal": true, "Less": true, "LessOrEqual": true,
	"Greater": true, "GreaterOrEqual": true, "Where": true, "Add": true, "Sub": true, "Mul": true, "Div": true,
	"Neg": true, "Min": true, "Max": true, "Identity": true,
}

// IsElementwise says n's output at an index depends only on its inputs at
// the (broadcast) same index, so a property along an axis carries through.
func IsElementwise(n *graph.Node) bool {
	return graph.IsDefaultDomain(n.Domain) && elementwise[n.OpType]
}

// invariantAlong reports whether v holds the same values at every index of
// its axis a (counted from the right: 0 is the last axis), which is true
// when that axis is 1 or absent.
func invariantAlong(v *graph.Value, a int, depth int) bool {
	if v == nil || !v.Type.Ranked || depth > 16 {
		return false
	}
	r := len(v.Type.Shape)
	if a >= r || v.Type.Shape[r-1-a].Equal(graph.D(1)) {
		return true
	}
	if c := v.Const; c != nil {
		return constInvariant(c, r-1-a)
	}
	p := v.Producer()
	switch {
	case p == nil:
		return false
	case IsElementwise(p) || p.Is("Expand"):
		ins := p.Inputs
		if p.Is("Expand") {
			ins = ins[:1]
		}
		for _, x := range ins {
			if x != nil && !invariantAlong(x, a, depth+1) {
				return false
			}
		}
		return true
	case p.Is("Reshape") || p.Is("Unsqueeze") || p.Is("Squeeze"):
		in := p.Input(0)
		if !in.Type.Ranked {
			return false
		}
		at, ok := graph.UnitViewAxis(in.Type.Shape, v.Type.Shape, r-1-a)
		return ok && invariantAlong(in, len(in.Type.Shape)-1-at, depth+1)
	}
	return false
}

// constInvariant checks a constant element by element along axis ax.
func constInvariant(c *graph.Tensor, ax int) bool {
	if c.Numel() > posmask.MaxConst || ax >= len(c.Dims) {
		return false
	}
	vals, err := c.Float64s()
	if err != nil {
		return false
	}
	inner := int64(1)
	for _, d := range c.Dims[ax+1:] {
		inner *= d
	}
	n := c.Dims[ax]
	for i, x := range vals {
		if (int64(i)/inner)%n != 0 && x != vals[int64(i)-((int64(i)/inner)%n)*inner] {
			return false
		}
	}
	return true
}
