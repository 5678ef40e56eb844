// Package masks holds what the matcher records about a site's mask: its
// terms (Term), the fills the source gives dropped keys (Fills) and what a
// row that sees no key therefore yields (Rows). The rule set binds them
// (passes/match), passes/match/resolve settles them once the site's
// lengths are known, and stage 1 reads them (passes/canonical).
package masks

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Kind is how a site masks its scores.
type Kind string

const (
	None     Kind = "none"
	Bool     Kind = "bool"     // true = attend
	Additive Kind = "additive" // added to the scores
)

// Form is how a mask term is applied to the scores.
type Form string

const (
	FormAdd            Form = "add"              // Add(scores, bias)
	FormWhere          Form = "where"            // Where(cond, scores, fill)
	FormAddWhere       Form = "add_where"        // Add(scores, Where(cond, 0, -inf))
	FormCausalWhere    Form = "causal_where"     // a slice of a lower-triangular buffer, or a causal Where condition
	FormCausalAdd      Form = "causal_add"       // a causal additive bias (passes/match/causal_terms.go)
	FormCausalAddWhere Form = "causal_add_where" // a causal condition added as Where(cond, 0, -inf)
	FormWindowView     Form = "add_window_view"  // added in Swin's (B/w, w, …) view
	FormInput          Form = "input"            // a lifted op's mask input
	FormRenorm         Form = "renorm"           // P·mask renormalised after the softmax (jax2onnx, passes/match/renorm.go)
	FormSub            Form = "sub"              // Sub(scores, bias), Funnel's s − INF·(1 − m) (passes/match/mask.go)
)

// Causal is the form of a site whose first term, applied as f, proved
// causal (passes/match/causal_terms.go).
func (f Form) Causal() Form {
	switch f {
	case FormAdd:
		return FormCausalAdd
	case FormAddWhere:
		return FormCausalAddWhere
	}
	return FormCausalWhere
}

// Term is one mask applied to the scores.
type Term struct {
	Kind  Kind
	Value *graph.Value // bool condition or additive tensor, unexpanded
	// Inverted marks a condition that is true for keys to drop.
	Inverted bool
	// Fill is the finite fill of Where(mask, x, fill): an additive term
	// Where(mask, 0, fill) for Kind additive, the bool mask's drop value for
	// Kind bool (finfo.min, say); nil is −inf.
	Fill *float64
	Form Form
	// BatchView is set when the term is added in a view of the scores whose
	// batch axis is split in two: (B/w, w, …) for Swin's shifted-window mask
	// (5-D), (B, H, …) of bmm scores for BLOOM's (4-D). The term broadcasts
	// against that view, whose first two dims are given here.
	BatchView []graph.Dim
	// BatchFold is set when the term was added to bmm scores (B·H, …) of a
	// rank-4 site, which reads them as (B, H, …) given here: BLOOM's ALiBi
	// bias when dynamo multiplies P·V in the view (passes/match/headview.go).
	BatchFold []graph.Dim
	// Placeholder marks a term whose Value stage 1 computes (Packed's
	// mask_index keep condition).
	Placeholder bool
	// KeyRow: the term is Value's last query row, (…, 1, Nk); Value
	// differs from it by a per-row constant on the keys the causal site
	// keeps, which the softmax ignores (ALiBi folded with causal, passes/match/alibi.go).
	KeyRow bool
	// Negated: the term is subtracted from the scores (Funnel's
	// s − INF·(1 − m), passes/match/mask.go); stage 1 negates it.
	Negated bool
	// Scale ≠ 0: the term was added before a scale of the scores (XLNet's
	// (ac + bd)·c), so the op adds it times Scale (passes/match/scores.go).
	Scale float64
	// Floor < 0: an additive term's known fill, the value (or less) it
	// gives a key it drops (−INF of Funnel's form); 0: unknown.
	Floor float64
	// SameRows: Value is the same in every query row (a padding mask built
	// as a full plane, passes/match/keyrow.go); stage 1 builds one row of it.
	SameRows bool
	// Ramp, when set, makes the term Value · Ramp (−Value · Ramp with
	// NegRamp): per-head ALiBi slopes times the key positions, the per-key
	// form of slopes · (j − i) on a causal site (passes/match/alibi.go).
	Ramp    *graph.Value
	NegRamp bool
}

// Shape is the shape the term reads as: Value's, with one query row for
// KeyRow, broadcast with Ramp's.
func (t Term) Shape() graph.Type {
	ty := t.Value.Type
	if !ty.Ranked {
		return ty
	}
	sh := append(graph.Shape(nil), ty.Shape...)
	if (t.KeyRow || t.SameRows) && len(sh) >= 2 {
		sh[len(sh)-2] = graph.D(1)
	}
	if t.Ramp != nil {
		if !t.Ramp.Type.Ranked {
			return graph.Type{DType: ty.DType}
		}
		sh = graph.Broadcast(sh, t.Ramp.Type.Shape)
	}
	ty.Shape = sh
	return ty
}

// Fills: what the source graph adds to the score of a key it drops. A row
// that still sees a key gives the same softmax whatever the fill (exp of a
// fill ≤ −1e30 underflows), but a row that sees none does not: under a
// finite fill (dynamo's Where(mask, 0, finfo.min)) it averages V over its
// keys; under −inf it is NaN. The matcher records the fills so stage 1 can
// state them on the canonical op (passes/match/resolve/rows.go, docs/fully-masked-rows.md).
type Fills struct {
	// Causal is the causal (and sliding-window) term's fill; nil is −inf.
	Causal *float64
	// Once: the causal term shares one fill with other mask terms (one
	// Where over their And, or a Min), so a key both drop gets it once.
	Once bool
	// DType is the type the source added the fills in (the score chain's).
	DType graph.DType
}

// FiniteFill is a drop fill as a term records it: nil for −inf.
func FiniteFill(x float64) *float64 {
	if math.IsInf(x, -1) {
		return nil
	}
	return &x
}

// FillValue is the value a recorded fill stands for.
func FillValue(f *float64) float64 {
	if f == nil {
		return math.Inf(-1)
	}
	return *f
}

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
// fills (Fills above). The zero value is EmptyZero, which needs none.
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
	// whose runtime gives NaN there write that guard (passes/lower/guard.go).
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
