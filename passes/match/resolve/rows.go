package resolve

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// Rows states a site's rows for its canonical op. Stage 1 combines
// the terms into one mask (passes/canonical/stage1.go): a single bool term
// stays bool, dropping keys with its fill; any other mask is additive. A
// site whose rows always see a key gets the zero value, so its op carries
// no row attributes.
func Rows(s Site) masks.Rows {
	var mask *graph.Value
	var maskFill *float64
	boolMask := len(s.Masks) == 1 && s.Masks[0].Kind == masks.Bool
	if len(s.Masks) > 0 {
		mask = s.Masks[0].Value
	}
	if boolMask {
		maskFill = s.Masks[0].Fill
	}
	floor := finiteFloor(s)
	if mask == nil && (!s.Causal || AtMost(s.QLen, s.KVLen)) {
		return masks.Rows{} // every row sees a key
	}
	if finiteTerms(s) && (!s.Causal || AtMost(s.QLen, s.KVLen)) {
		// A row whose keys all sit at the finite fill is the source's
		// literal row: the op recomputes it as the source rounds it.
		return masks.Rows{Empty: masks.EmptyLiteral, MaskFill: math.Inf(-1), CausalFill: math.Inf(-1), MaskFloor: floor}
	}
	r := masks.Rows{Empty: masks.EmptyLiteral, MaskFill: masks.FillValue(maskFill), CausalFill: math.Inf(-1)}
	if !boolMask {
		r.MaskFloor = floor
	}
	if s.ZeroRowGuard {
		r.Empty = masks.EmptyLiteralZero
	}
	if s.Causal {
		r.CausalFill = masks.FillValue(s.Fills.Causal)
		r.Once = s.Fills.Once
	}
	if !boolMask {
		r.MaskFill = math.Inf(-1)
	}
	dt := s.Fills.DType
	r.Round = (dt == graph.Float16 || dt == graph.BFloat16) && dt == s.DType
	if r.Empty == masks.EmptyLiteralZero && !r.Finite() {
		return masks.Rows{Guarded: mask != nil} // −inf everywhere, guarded: zeros, the default
	}
	if !r.Finite() {
		r.Once, r.Round = false, false // nothing to combine or round
	}
	return r
}

// finiteTerms reports a mask built only from finite fills (Where(m, 0,
// −1e4), Funnel's −1e6·(1 − m)): the op adds them as they are; a row they
// fill entirely is the source's literal row, which mask_floor finds.
func finiteTerms(s Site) bool {
	for _, t := range s.Masks {
		if t.Kind != masks.Additive || !(t.Floor < 0 || t.Fill != nil && !posmask.NegInf(*t.Fill)) {
			return false
		}
	}
	return len(s.Masks) > 0
}

// finiteFloor is half the highest finite fill of the site's additive terms
// (a key one of them drops sits at or below it), 0 when none states one.
func finiteFloor(s Site) float64 {
	floor := 0.0
	for _, t := range s.Masks {
		fill := t.Floor
		if t.Kind == masks.Additive && t.Fill != nil && !posmask.NegInf(*t.Fill) && *t.Fill < 0 {
			fill = *t.Fill
		}
		if fill < 0 && (floor == 0 || fill/2 > floor) {
			floor = fill / 2
		}
	}
	return floor
}
