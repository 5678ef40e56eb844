package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
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
	if (mask == nil || finiteTerms(s)) && (!s.Causal || provablyAtMost(s.QLen, s.KVLen)) {
		return Rows{} // every row sees a key, or its finite mask is the literal row already
	}
	r := Rows{Empty: EmptyLiteral, MaskFill: fillValue(maskFill), CausalFill: math.Inf(-1)}
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

// finiteTerms reports a mask built only from moderate finite fills
// (Where(m, 0, −1e4)): the op adds them as they are, so a row they fill
// is the source's literal row without any row semantics.
func finiteTerms(s *Match) bool {
	for _, t := range s.Masks {
		if t.Kind != MaskAdditive || t.Fill == nil || negInf(*t.Fill) {
			return false
		}
	}
	return len(s.Masks) > 0
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
