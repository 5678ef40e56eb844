package passes

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

// Rows is how an op computes its rows that see no key: the source graph's
// fills (match_fills.go). The zero value is EmptyZero, which needs none.
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

// rowsOfSite states a site's rows for its canonical op, whose mask is mask
// (bool dropped keys adding maskFill). A site whose rows always see a key
// gets the zero value, so its op carries no row attributes.
func rowsOfSite(s *Site, mask *graph.Value, maskFill *float64, nq, nk graph.Dim) Rows {
	if (mask == nil || finiteTerms(s)) && (!s.Causal || provablyAtMost(nq, nk)) {
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
	if mask == nil || mask.Type.DType != graph.Bool {
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

// finiteTerms reports a mask built only from moderate finite fills
// (Where(m, 0, −1e4)): the op adds them as they are, so a row they fill
// is the source's literal row without any row semantics.
func finiteTerms(s *Site) bool {
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

// attrs are the non-default row attributes, as canonical op and
// FlashAttention spell them.
func (r Rows) attrs() []*graph.Attr {
	if !r.Literal() {
		return nil
	}
	as := []*graph.Attr{graph.IntAttr("empty_rows", int64(r.Empty))}
	if !math.IsInf(r.MaskFill, -1) {
		as = append(as, graph.FloatAttr("mask_fill", float32(r.MaskFill)))
	}
	if !math.IsInf(r.CausalFill, -1) {
		as = append(as, graph.FloatAttr("causal_fill", float32(r.CausalFill)))
	}
	if r.Once {
		as = append(as, graph.IntAttr("fill_once", 1))
	}
	if r.Round {
		as = append(as, graph.IntAttr("fill_round", 1))
	}
	return as
}

// rowsOf reads the row attributes of a canonical op or FlashAttention.
func rowsOf(n *graph.Node) Rows {
	neg := float32(math.Inf(-1))
	return Rows{
		Empty:      EmptyRows(n.AttrInt("empty_rows", 0)),
		MaskFill:   float64(n.AttrFloat("mask_fill", neg)),
		CausalFill: float64(n.AttrFloat("causal_fill", neg)),
		Once:       n.AttrInt("fill_once", 0) == 1,
		Round:      n.AttrInt("fill_round", 0) == 1,
		Guarded:    n.AttrInt("zero_rows", 0) == 1,
	}
}
