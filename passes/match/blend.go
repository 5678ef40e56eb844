package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// Keras masks its scores by blending (keras/src/layers/attention: the
// masked softmax), which tf2onnx writes as
//
//	Add(Mul(Cast(m), s), Mul(c, Cast(Not(m))))        m bool, true = attend
//
// with c = −0.7·finfo.max, or with Cast(m) folded into a 0/1 constant. For
// finite scores that is Where(m, s, c): a bool mask with the finite fill c,
// taken through the same forms (a causal m becomes causal).

// blendMask recognises the blend at Add n; it returns the scores s, the
// keep condition, the fill and the Mul it passes on the score path.
func blendMask(n *graph.Node) (s, cond *graph.Value, fill float64, mul *graph.Node, ok bool) {
	for i := 0; i < 2; i++ {
		keep, drop := n.Input(i).Producer(), n.Input(1-i).Producer()
		if keep == nil || drop == nil || !keep.Is("Mul") || !drop.Is("Mul") {
			continue
		}
		cond, fill, ok := dropTerm(drop)
		if !ok {
			continue
		}
		for j := 0; j < 2; j++ {
			if keepFactorOf(keep.Input(j), cond) {
				return keep.Input(1 - j), cond, fill, keep, true
			}
		}
	}
	return nil, nil, 0, nil, false
}

// dropTerm reads Mul(c, Cast(Not(m))) in either order: c a constant scalar,
// m bool.
func dropTerm(mul *graph.Node) (cond *graph.Value, fill float64, ok bool) {
	for i := 0; i < 2; i++ {
		c, okC := mul.Input(i).Scalar()
		cast := mul.Input(1 - i).Producer()
		if !okC || !cast.IsFloatCast() {
			continue
		}
		not := cast.Input(0).Producer()
		if not == nil || !not.Is("Not") || not.Input(0).Type.DType != graph.Bool {
			continue
		}
		return not.Input(0), c, true
	}
	return nil, 0, false
}

// keepFactorOf says x is 1 where cond is true and 0 where it is false:
// Cast(cond), or a constant whose nonzero pattern is cond's (tf2onnx folds
// the Cast of a constant condition but not the Not beside it).
func keepFactorOf(x, cond *graph.Value) bool {
	if p := x.Producer(); p.IsFloatCast() && p.Input(0) == cond {
		return true
	}
	a, b := x.Const, cond.Const
	if a == nil || b == nil || a.Numel() != b.Numel() || a.Numel() > posmask.MaxConst || len(a.Dims) != len(b.Dims) {
		return false
	}
	for i := range a.Dims {
		if a.Dims[i] != b.Dims[i] {
			return false
		}
	}
	av, err1 := a.Float64s()
	bv, err2 := b.Float64s()
	if err1 != nil || err2 != nil {
		return false
	}
	for i := range av {
		if (av[i] != 0 && av[i] != 1) || (av[i] == 1) != (bv[i] != 0) {
			return false
		}
	}
	return true
}

// isBlendMask is the rule's guard.
func isBlendMask(n *graph.Node) bool {
	_, _, _, _, ok := blendMask(n)
	return ok
}

// peelBlendMask takes the blend as Where(m, s, c) on the scores.
func (m *matcher) peelBlendMask(n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	x, cond, fill, mul, _ := blendMask(n)
	if -fill < absorbingFill {
		// Keras's −0.7·finfo.max absorbs the scores; a moderate fill would
		// replace them, which an additive mask does not give on a row
		// that keeps no key.
		return nil, nil, reject(CodeMask, n, "node %q blends the scores with the fill %g, which replaces a dropped key's score: an additive mask gives that only for a fill of −1e30 or less", n.Label(), fill)
	}
	if r := m.onlyUse(mul.Output(0)); r != nil {
		return nil, nil, r
	}
	s.noteFillType(n)
	if r := takeMask(m, whereForms, n, whereTerm{cond: cond, fill: fill}, s); r != nil {
		return nil, nil, r
	}
	return x, []*graph.Node{mul}, nil
}
