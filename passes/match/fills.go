package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// Fills: what the source graph adds to the score of a key it drops. A row
// that still sees a key gives the same softmax whatever the fill (exp of a
// fill ≤ −1e30 underflows), but a row that sees none does not: under a
// finite fill (dynamo's Where(mask, 0, finfo.min)) it averages V over its
// keys; under −inf it is NaN. The matcher records the fills so stage 1 can
// state them on the canonical op (rows.go, docs/fully-masked-rows.md).
type Fills struct {
	// Causal is the causal (and sliding-window) term's fill; nil is −inf.
	Causal *float64
	// Once: the causal term shares one fill with other mask terms (one
	// Where over their And, or a Min), so a key both drop gets it once.
	Once bool
	// DType is the type the source added the fills in (the score chain's).
	DType graph.DType
}

// finiteFill is a drop fill as a term records it: nil for −inf.
func finiteFill(x float64) *float64 {
	if math.IsInf(x, -1) {
		return nil
	}
	return &x
}

// fillValue is the value a recorded fill stands for.
func fillValue(f *float64) float64 {
	if f == nil {
		return math.Inf(-1)
	}
	return *f
}

// whereFill is the dropping scalar of Where(m, 0, fill) or Where(m, fill, 0).
func whereFill(w *graph.Node) float64 {
	x, _ := w.Input(1).Scalar()
	y, _ := w.Input(2).Scalar()
	if x == 0 {
		return y
	}
	return x
}

// addCausalFill records the fill of a causal term the op's `causal` now
// states; a second causal term on the site adds its fill, as the source
// adds both (in float32, where two finfo.min fills overflow to −inf).
func (s *draft) addCausalFill(f *float64) {
	if !s.Causal {
		s.Fills.Causal = f
		return
	}
	if s.Fills.Causal == nil || f == nil {
		s.Fills.Causal = nil
		return
	}
	s.Fills.Causal = finiteFill(float64(float32(*s.Fills.Causal) + float32(*f)))
}

// noteFillType records the type a mask term is added in.
func (s *draft) noteFillType(n *graph.Node) {
	if s.Fills.DType == graph.Undefined && n.Output(0) != nil {
		s.Fills.DType = n.Output(0).Type.DType
	}
}

// biasDropFill is the value a triangular additive bias (posmask.BiasTri) holds on
// the keys it drops: a constant's dropped entries, Where(c, 0, fill),
// Trilu of a full fill, or m·fill. nil is −inf; ok is false when the value
// is not one number.
func biasDropFill(v *graph.Value, depth int) (f *float64, ok bool) {
	if depth > 12 || v == nil {
		return nil, false
	}
	if v.Const != nil {
		vals, err := v.Const.Float64s()
		if err != nil || v.Const.Numel() > posmask.MaxConst {
			return nil, false
		}
		var drop *float64
		seen := false
		for _, x := range vals {
			if x == 0 {
				continue
			}
			if seen && fillValue(drop) != x {
				return nil, false
			}
			drop, seen = finiteFill(x), true
		}
		return drop, seen
	}
	p := v.Producer()
	switch {
	case p == nil:
		return nil, false
	case posmask.KeepsPlane(p) || p.IsFloatCast() && p.Input(0).Type.DType.IsFloat():
		return biasDropFill(p.Input(0), depth+1)
	case p.Is("Where"):
		return finiteFill(whereFill(p)), true
	case p.Is("Trilu"):
		return filledValue(p.Input(0))
	case p.Is("Mul"):
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && posmask.NegInf(c) {
				return finiteFill(c), true
			}
		}
	}
	return nil, false
}

// filledValue is the one value of a tensor posmask.FilledWith accepts.
func filledValue(v *graph.Value) (*float64, bool) {
	var got *float64
	seen, same := false, true
	posmask.FilledWith(v, func(x float64) bool {
		if seen && fillValue(got) != x {
			same = false
		}
		got, seen = finiteFill(x), true
		return true
	})
	return got, seen && same
}
