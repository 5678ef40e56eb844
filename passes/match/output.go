package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Output family: the product of the probabilities with V. Variants:
//   MatMul(P, V)                  V (…, Nk, Dv)
//   MatMul(V, Transpose(P))       SAGAN: V channels-first (…, Dv, Nk)
//   Einsum("…ij,…jd->…id", P, V)
// with an optional Cast back to the I/O type and inference-time Dropout or
// Identity between the softmax and the product.

// outputRules are the steps from the probabilities to their product with
// V, one entry per variant (match_rules.go).
var outputRules = []outputRule{
	{op: "Cast", when: func(m *matcher, n *graph.Node, idx int, s *draft) bool { return n.IsFloatCast() },
		peel: func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
			s.SoftCasts = true
			return n.Output(0), nil, nil
		}},
	{op: "Identity", peel: passThrough},
	{op: "Dropout", when: func(m *matcher, n *graph.Node, idx int, s *draft) bool { return dropoutIsIdentity(n) },
		peel: func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
			if len(n.Outputs) > 1 && n.Outputs[1] != nil && len(n.Outputs[1].Uses()) > 0 {
				return nil, nil, reject(CodeIntermediate, n, "dropout %q's mask output is used", n.Label())
			}
			return n.Output(0), nil, nil
		}},
	// Where(row fully masked, 0, P): the fused op's own semantics.
	{op: "Where", when: func(m *matcher, n *graph.Node, idx int, s *draft) bool { return idx == 2 && m.isZeroRowGuard(n, s) },
		peel: func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
			s.ZeroRowGuard = true
			return n.Output(0), nil, nil
		}},
	// BLOOM: probabilities viewed back from (B, H, Nq, Nk) for the bmm (one
	// Reshape; tf2onnx's Keras: Unsqueeze then Reshape, headview.go).
	{op: "Reshape", when: mergesHeadView, peel: (*matcher).leaveHeadView},
	{op: "Unsqueeze", when: mergesHeadView, peel: (*matcher).leaveHeadView},
	{op: "MatMul", product: true, when: func(m *matcher, n *graph.Node, idx int, s *draft) bool { return idx == 0 },
		peel: func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
			s.V, s.Output = n.Input(1), n.Output(0)
			return nil, nil, nil
		}},
	// SAGAN: MatMul(V, Transpose(P)) with V channels-first.
	{op: "Transpose", product: true, when: func(m *matcher, n *graph.Node, idx int, s *draft) bool { return swapsLastTwo(n) },
		peel: func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
			pt := n.Output(0)
			if r := m.onlyUse(pt); r != nil {
				return nil, nil, r
			}
			mm := dataUses(pt)[0].Node
			if !mm.Is("MatMul") || dataUses(pt)[0].Index != 1 {
				return nil, nil, reject(CodeProduct, pt, "transposed probabilities %q feed %s, not MatMul(V, Aᵀ)", pt.Name, mm.OpType)
			}
			s.V, s.VChannelsFirst, s.Output = mm.Input(0), true, mm.Output(0)
			return nil, []*graph.Node{mm}, nil
		}},
	{op: "Einsum", product: true, peel: func(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
		return nil, nil, m.matchPVEinsum(n, idx, s)
	}},
}

func passThrough(m *matcher, n *graph.Node, idx int, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	return n.Output(0), nil, nil
}

func (m *matcher) matchOutput(p *graph.Value, s *draft) ([]*graph.Node, *Reject) {
	var nodes []*graph.Node
	for steps := 0; steps < 8; steps++ {
		if isnan, where := nanGuard(p); where != nil {
			// Where(IsNaN(P), 0, P), PyTorch's SDPA export: NaN appears only
			// on fully masked rows, which the fused op makes zeros itself.
			// It reads P twice, so it is matched before the one-use rules.
			s.ZeroRowGuard = true
			nodes = append(nodes, isnan, where)
			p = where.Output(0)
			continue
		}
		if chain, cond, next := renormMask(p); next != nil {
			if r := m.peelRenormMask(chain[0], cond, s); r != nil {
				return nil, r
			}
			nodes = append(nodes, chain...)
			p = next
			continue
		}
		if r := m.onlyUse(p); r != nil {
			return nil, r
		}
		n := dataUses(p)[0].Node
		idx := dataUses(p)[0].Index
		nodes = append(nodes, n)
		rule := findOutputRule(outputRules, m, n, idx, s)
		if rule == nil {
			return nil, reject(CodeProduct, n, "the probabilities feed %s (node %q), not a product with V", n.OpType, n.Label())
		}
		next, inner, r := rule.peel(m, n, idx, s)
		if r != nil {
			return nil, r
		}
		nodes = append(nodes, inner...)
		if rule.product && s.headView != nil {
			if r := m.liftHeadView(n, s); r != nil {
				return nil, r
			}
		}
		if rule.product {
			return nodes, nil
		}
		p = next
	}
	return nil, reject(CodeProduct, p, "too many steps after the softmax")
}

func dropoutIsIdentity(n *graph.Node) bool {
	// Inference graphs: training_mode absent or constant false.
	if t := n.Input(2); t != nil {
		v, ok := t.Scalar()
		return ok && v == 0
	}
	return true
}

// swapsLastTwo reports whether a Transpose exchanges the last two axes only.
func swapsLastTwo(n *graph.Node) bool {
	perm := n.AttrInts("perm")
	r := len(perm)
	if r == 0 {
		return n.Input(0).Type.Rank() == 2
	}
	if r < 2 || perm[r-1] != int64(r-2) || perm[r-2] != int64(r-1) {
		return false
	}
	for i := 0; i < r-2; i++ {
		if perm[i] != int64(i) {
			return false
		}
	}
	return true
}

// isZeroRowGuard recognises Where(Equal(ReduceMax(bias, -1), -inf), 0, P),
// the guard ONNX's Attention function body puts after the softmax so that a
// fully masked row gives zeros instead of NaN. bias must be a tensor the site
// adds to its scores, so the guarded rows are fully masked in the site too.
func (m *matcher) isZeroRowGuard(w *graph.Node, s *draft) bool {
	if z, ok := w.Input(1).Scalar(); !ok || z != 0 {
		return false
	}
	eq := w.Input(0).Producer()
	if eq == nil || !eq.Is("Equal") {
		return false
	}
	rm, c := eq.Input(0), eq.Input(1)
	if x, ok := c.Scalar(); !ok || !math.IsInf(x, -1) {
		rm, c = c, rm
		if x, ok := c.Scalar(); !ok || !math.IsInf(x, -1) {
			return false
		}
	}
	red := rm.Producer()
	if red == nil || !red.Is("ReduceMax") {
		return false
	}
	x := red.Input(0)
	for _, b := range s.biasInputs {
		if b == x {
			return true
		}
	}
	return false
}

// nanGuard recognises P read only by IsNaN(P) and Where(IsNaN(P), 0, P).
func nanGuard(p *graph.Value) (isnan, where *graph.Node) {
	uses := dataUses(p)
	if len(uses) != 2 {
		return nil, nil
	}
	for _, u := range uses {
		if u.Node.Is("IsNaN") {
			isnan = u.Node
		} else if u.Node.Is("Where") && u.Index == 2 {
			where = u.Node
		}
	}
	if isnan == nil || where == nil || where.Input(0) != isnan.Output(0) || len(isnan.Output(0).Uses()) != 1 {
		return nil, nil
	}
	if z, ok := where.Input(1).Scalar(); !ok || z != 0 {
		return nil, nil
	}
	return isnan, where
}
