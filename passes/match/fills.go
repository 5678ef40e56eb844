package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// whereFill is the dropping scalar of Where(m, 0, fill) or Where(m, fill, 0).
func whereFill(w *graph.Node) float64 {
	x, _ := w.Input(1).Scalar()
	y, _ := w.Input(2).Scalar()
	if x == 0 {
		return y
	}
	return x
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
			if seen && masks.FillValue(drop) != x {
				return nil, false
			}
			drop, seen = masks.FiniteFill(x), true
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
		return masks.FiniteFill(whereFill(p)), true
	case p.Is("Trilu"):
		return filledValue(p.Input(0))
	case p.Is("Mul"):
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && posmask.NegInf(c) {
				return masks.FiniteFill(c), true
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
		if seen && masks.FillValue(got) != x {
			same = false
		}
		got, seen = masks.FiniteFill(x), true
		return true
	})
	return got, seen && same
}
