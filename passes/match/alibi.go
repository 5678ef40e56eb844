package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
	"github.com/attnopt/attnopt/passes/match/resolve"
)

// ALiBi with causal. MPT-type models add slope_h·(j − i) to the scores,
// often folded with the causal mask into one bias. On the keys causal keeps
// a term that differs between rows only by a per-row constant is, for the
// softmax, its last query row: a (…, 1, Nk) per-key bias. Two forms are
// split that way: a constant bias that drops a triangle (dynamo folds the
// whole bias), and slopes · ramp(j − i) computed at run time (TorchScript).

// alibiConst reads a constant bias that drops exactly the keys above a
// triangle with one fill and, where it keeps keys, equals its last query
// row plus a per-row constant. rest is the per-key term left beside causal.
func alibiConst(l maskLeaf) (t posmask.Tri, fill *float64, rest masks.Term, ok bool) {
	t, ok = biasDropTri(l)
	if !ok {
		return posmask.Tri{}, nil, masks.Term{}, false
	}
	fill, ok = dropValue(l.v.Const)
	if !ok || !resolve.RowShifted(l.v.Const, t) {
		return posmask.Tri{}, nil, masks.Term{}, false
	}
	return t, fill, masks.Term{Kind: masks.Additive, Value: l.v, Form: masks.FormAdd, KeyRow: true}, true
}

// dropValue is the one value a constant holds where it drops (≤ −1e30).
func dropValue(c *graph.Tensor) (*float64, bool) {
	vals, err := c.Float64s()
	if err != nil {
		return nil, false
	}
	var drop *float64
	seen := false
	for _, x := range vals {
		if !posmask.NegInf(x) {
			continue
		}
		if seen && masks.FillValue(drop) != x {
			return nil, false
		}
		drop, seen = masks.FiniteFill(x), true
	}
	return drop, seen
}

// alibiRowOf reads a constant bias (N > 1 rows) as a candidate KeyRow.
func alibiRowOf(l maskLeaf) (resolve.Ramp, bool) {
	c := l.v.Const
	if !l.bias || c == nil || !c.DType.IsFloat() || len(c.Dims) < 2 || c.Dims[len(c.Dims)-2] < 2 || c.Numel() > posmask.MaxConst {
		return resolve.Ramp{}, false
	}
	return resolve.Ramp{Term: masks.Term{Kind: masks.Additive, Value: l.v, Form: masks.FormAdd, KeyRow: true}, Row: c}, true
}

// alibiRampOf reads Mul(slopes, x) where slopes is per head (size-1 query
// and key axes) and x is a float cast or plane-keeping view of ±(a − b) or
// −|a − b| for a key ramp a and a query ramp b with equal offsets.
func alibiRampOf(v *graph.Value) (resolve.Ramp, bool) {
	p := v.Producer()
	if p == nil || !p.Is("Mul") {
		return resolve.Ramp{}, false
	}
	for i := 0; i < 2; i++ {
		slopes, x := p.Input(1-i), p.Input(i)
		if !perHead(slopes) {
			continue
		}
		sign, isAbs, key, ok := relRamp(x, 1, false, 0)
		if !ok {
			continue
		}
		return resolve.Ramp{
			Term: masks.Term{Kind: masks.Additive, Value: slopes, Form: masks.FormAdd, Ramp: key, NegRamp: sign < 0},
			Abs:  isAbs,
		}, true
	}
	return resolve.Ramp{}, false
}

// perHead reports a float tensor whose last two axes are 1.
func perHead(v *graph.Value) bool {
	t := v.Type
	if !t.Ranked || len(t.Shape) < 2 || !t.DType.IsFloat() {
		return false
	}
	r := len(t.Shape)
	return isOneDim(t.Shape[r-1]) && isOneDim(t.Shape[r-2])
}

func isOneDim(d graph.Dim) bool { x, ok := d.Value(); return ok && x == 1 }

// relRamp follows x to a − b of two ramps and returns the sign of j in x on
// the keys j ≤ i, whether an Abs made that hold only there, and the key
// ramp.
func relRamp(x *graph.Value, sign int, isAbs bool, depth int) (int, bool, *graph.Value, bool) {
	p := x.Producer()
	if p == nil || depth > 8 {
		return 0, false, nil, false
	}
	switch {
	case posmask.KeepsPlane(p) || p.Is("Cast"):
		return relRamp(p.Input(0), sign, isAbs, depth+1)
	case p.Is("Neg"):
		return relRamp(p.Input(0), -sign, isAbs, depth+1)
	case p.Is("Abs") && !isAbs:
		// |a − b| = i − j where j ≤ i, whichever order: j's sign is −1.
		s, _, key, ok := relRamp(p.Input(0), 1, true, depth+1)
		return -sign, true, key, ok && s != 0
	case p.Is("Sub"):
		a, okA := posmask.RampOf(p.Input(0), 0)
		b, okB := posmask.RampOf(p.Input(1), 0)
		if !okA || !okB || a.Axis == b.Axis || a.Axis > 1 || b.Axis > 1 || !a.Off.Equal(b.Off) {
			return 0, false, nil, false
		}
		if a.Axis == 0 {
			return sign, isAbs, p.Input(0), true
		}
		return -sign, isAbs, p.Input(1), true
	}
	return 0, false, nil, false
}
