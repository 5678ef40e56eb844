package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// EmptyRows is what a row that sees no key yields: the canonical op's and
// FlashAttention's empty_rows attribute (docs/fully-masked-rows.md).
type EmptyRows int64

const (
	// EmptyZero: zeros (FlashAttention's default).
	EmptyZero EmptyRows = 0
	// EmptyLiteral: the softmax over every key's literal score (the scaled
	// score plus the source's fills); NaN when all of them are −inf.
	EmptyLiteral EmptyRows = 1
	// EmptyLiteralZero: the same, but zeros where all are −inf (the source
	// guarded those rows).
	EmptyLiteralZero EmptyRows = 2
)

var emptyRowsNames = [...]string{"zero", "literal", "literal_zero"}

// String is the JSON spelling.
func (e EmptyRows) String() string {
	if e >= 0 && int(e) < len(emptyRowsNames) {
		return emptyRowsNames[e]
	}
	return "unknown"
}

// Rows is how an op computes its rows that see no key: the source graph's
// fills (fills.go). The zero value is EmptyZero, which needs none.
type Rows struct {
	Empty      EmptyRows
	MaskFill   float64 // added to keys a bool mask drops
	CausalFill float64 // added to keys causal or the window drop
	Once       bool    // a key both drop gets min(mask term, CausalFill), not the sum
	Round      bool    // literal scores round to the op's type, as the source's Add did
	// MaskFloor < 0: a float mask value at or below it drops its key too (half
	// the mask's finite fill), so a row whose keys all sit at that fill is the
	// source's literal row; 0: none.
	MaskFloor float64
	// Guarded (canonical op only, attribute zero_rows): Empty is EmptyZero
	// because the source guards its rows of all −inf to zeros; lowerings
	// whose runtime gives NaN there write that guard (fuse_guard.go).
	Guarded bool
}

// Literal reports whether the rows follow the source's fills.
func (r Rows) Literal() bool { return r.Empty != EmptyZero }

// Finite reports whether some fill is finite: a row that sees no key then
// has finite literal scores.
func (r Rows) Finite() bool {
	return r.FiniteFills() || r.Literal() && r.MaskFloor < 0
}

// FiniteFills reports a finite mask_fill or causal_fill: terms the op adds
// itself, which a lowering that builds one bias must keep finite.
func (r Rows) FiniteFills() bool {
	return r.Literal() && (!math.IsInf(r.MaskFill, -1) || !math.IsInf(r.CausalFill, -1))
}

// rowsOfSite states a site's rows for its canonical op. Stage 1 combines
// the terms into one mask (passes/canonical/stage1.go): a single bool term
// stays bool, dropping keys with its fill; any other mask is additive. A
// site whose rows always see a key gets the zero value, so its op carries
// no row attributes.
func rowsOfSite(s *Match) Rows {
	var mask *graph.Value
	var maskFill *float64
	boolMask := len(s.Masks) == 1 && s.Masks[0].Kind == MaskBool
	if len(s.Masks) > 0 {
		mask = s.Masks[0].Value
	}
	if boolMask {
		maskFill = s.Masks[0].Fill
	}
	floor := finiteFloor(s)
	if mask == nil && (!s.Causal || provablyAtMost(s.QLen, s.KVLen)) {
		return Rows{} // every row sees a key
	}
	if finiteTerms(s) && (!s.Causal || provablyAtMost(s.QLen, s.KVLen)) {
		// A row whose keys all sit at the finite fill is the source's
		// literal row: the op recomputes it as the source rounds it.
		return Rows{Empty: EmptyLiteral, MaskFill: math.Inf(-1), CausalFill: math.Inf(-1), MaskFloor: floor}
	}
	r := Rows{Empty: EmptyLiteral, MaskFill: fillValue(maskFill), CausalFill: math.Inf(-1)}
	if !boolMask {
		r.MaskFloor = floor
	}
	if s.ZeroRowGuard {
		r.Empty = EmptyLiteralZero
	}
	if s.Causal {
		r.CausalFill = fillValue(s.Fills.Causal)
		r.Once = s.Fills.Once
	}
	if !boolMask {
		r.MaskFill = math.Inf(-1)
	}
	dt := s.Fills.DType
	r.Round = (dt == graph.Float16 || dt == graph.BFloat16) && dt == s.DType
	if r.Empty == EmptyLiteralZero && !r.Finite() {
		return Rows{Guarded: mask != nil} // −inf everywhere, guarded: zeros, the default
	}
	if !r.Finite() {
		r.Once, r.Round = false, false // nothing to combine or round
	}
	return r
}

// MaySeeNoKey reports whether some query row of the site can see no key:
// it has a mask, or causal attention with possibly more queries than keys
// (the condition rowsOfSite states rows under).
func (s *Match) MaySeeNoKey() bool {
	return len(s.Masks) > 0 || (s.Causal && !provablyAtMost(s.QLen, s.KVLen))
}

// finiteTerms reports a mask built only from finite fills (Where(m, 0,
// −1e4), Funnel's −1e6·(1 − m)): the op adds them as they are; a row they
// fill entirely is the source's literal row, which mask_floor finds.
func finiteTerms(s *Match) bool {
	for _, t := range s.Masks {
		if t.Kind != MaskAdditive || !(t.Floor < 0 || t.Fill != nil && !posmask.NegInf(*t.Fill)) {
			return false
		}
	}
	return len(s.Masks) > 0
}

// floorBesideTerms refuses a subtracted finite fill (Funnel's
// s − 1e6·(1 − m)) that other additive terms join (Funnel's position
// biases): on a row that keeps no key the source's result is its own
// rounding of the sum at 1e6, in its order, which the op, adding one
// combined mask, does not reproduce (off by 0.02 there); every other row
// would be exact. Alone the term is exact everywhere (mask_floor).
func floorBesideTerms(s *draft) *Reject {
	for _, t := range s.Masks {
		if t.Floor < 0 && len(s.Masks) > 1 {
			return reject(CodeMask, t.Value, "mask %q subtracts the finite fill %g beside %d other mask terms: on a row that keeps no key the source's result is its own float rounding of their sum, which the fused op does not reproduce (docs/fully-masked-rows.md)", t.Value.Name, -t.Floor, len(s.Masks)-1)
		}
	}
	return nil
}

// finiteFloor is half the highest finite fill of the site's additive terms
// (a key one of them drops sits at or below it), 0 when none states one.
func finiteFloor(s *Match) float64 {
	floor := 0.0
	for _, t := range s.Masks {
		fill := t.Floor
		if t.Kind == MaskAdditive && t.Fill != nil && !posmask.NegInf(*t.Fill) && *t.Fill < 0 {
			fill = *t.Fill
		}
		if fill < 0 && (floor == 0 || fill/2 > floor) {
			floor = fill / 2
		}
	}
	return floor
}

// provablyAtMost reports a ≤ b for static dims or equal ones.
func provablyAtMost(a, b graph.Dim) bool {
	if a.Equal(b) {
		return true
	}
	x, ok1 := a.Value()
	y, ok2 := b.Value()
	return ok1 && ok2 && x <= y
}
