package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/posmask"
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
func alibiConst(l maskLeaf) (t posmask.Tri, fill *float64, rest MaskTerm, ok bool) {
	t, ok = biasDropTri(l)
	if !ok {
		return posmask.Tri{}, nil, MaskTerm{}, false
	}
	fill, ok = dropValue(l.v.Const)
	if !ok || !rowShifted(l.v.Const, t) {
		return posmask.Tri{}, nil, MaskTerm{}, false
	}
	return t, fill, MaskTerm{Kind: MaskAdditive, Value: l.v, Form: MaskFormAdd, KeyRow: true}, true
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
		if seen && fillValue(drop) != x {
			return nil, false
		}
		drop, seen = finiteFill(x), true
	}
	return drop, seen
}

// rowShifted reports whether every kept entry (i, j) of c's planes is
// c[last, j] plus a constant of row i, and the last row keeps every key.
func rowShifted(c *graph.Tensor, t posmask.Tri) bool {
	dims := c.Dims
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	off, ok := t.Off.Value()
	if !ok || rows == 0 || cols == 0 || rows-1+off < cols-1 {
		return false
	}
	vals, err := c.Float64s()
	if err != nil {
		return false
	}
	const tol = 1e-6
	plane := rows * cols
	for base := int64(0); base < int64(len(vals)); base += plane {
		last := vals[base+(rows-1)*cols : base+rows*cols]
		for i := int64(0); i < rows; i++ {
			row := vals[base+i*cols : base+(i+1)*cols]
			shift := row[0] - last[0]
			for j := int64(0); j <= i+off && j < cols; j++ {
				if d := row[j] - last[j] - shift; math.Abs(d) > tol*(1+math.Abs(last[j])) {
					return false
				}
			}
		}
	}
	return true
}

// alibiRamp is slopes · ±(j − i) computed at run time, or slopes · −|j − i|
// (llm-foundry's full ALiBi), which is slopes · (j − i) on the keys causal
// keeps when Nq = Nk.
type alibiRamp struct {
	term MaskTerm // slopes · ±key ramp, or a KeyRow: the per-key equivalent
	abs  bool     // equal only where j ≤ i
	// row: a constant (folded from constant ramps) that must be its last
	// row plus a per-row constant on the keys causal keeps.
	row *graph.Tensor
}

// holds reports whether the per-key form equals the term up to a per-row
// constant on the keys s keeps.
func (r *alibiRamp) holds(s *draft) bool {
	switch {
	case r.row != nil:
		off, ok := posmask.DimMinus(s.KVLen, s.QLen)
		return s.Causal && ok && rowShifted(r.row, posmask.Tri{Off: off})
	case r.abs:
		// slopes·(−|j − i|) is slopes·(j − i) only on the keys j ≤ i.
		return s.Causal && s.QLen.Equal(s.KVLen)
	}
	return true
}

// alibiRowOf reads a constant bias (N > 1 rows) as a candidate KeyRow.
func alibiRowOf(l maskLeaf) (alibiRamp, bool) {
	c := l.v.Const
	if !l.bias || c == nil || !c.DType.IsFloat() || len(c.Dims) < 2 || c.Dims[len(c.Dims)-2] < 2 || c.Numel() > posmask.MaxConst {
		return alibiRamp{}, false
	}
	return alibiRamp{term: MaskTerm{Kind: MaskAdditive, Value: l.v, Form: MaskFormAdd, KeyRow: true}, row: c}, true
}

// alibiRampOf reads Mul(slopes, x) where slopes is per head (size-1 query
// and key axes) and x is a float cast or plane-keeping view of ±(a − b) or
// −|a − b| for a key ramp a and a query ramp b with equal offsets.
func alibiRampOf(v *graph.Value) (alibiRamp, bool) {
	p := v.Producer()
	if p == nil || !p.Is("Mul") {
		return alibiRamp{}, false
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
		return alibiRamp{
			term: MaskTerm{Kind: MaskAdditive, Value: slopes, Form: MaskFormAdd, Ramp: key, NegRamp: sign < 0},
			abs:  isAbs,
		}, true
	}
	return alibiRamp{}, false
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
