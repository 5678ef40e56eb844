package passes

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/match/masks"
)

// What the rule set finds (passes/match), under the names cmd/, report/
// and validate/ use.
type (
	// Site is one attention site, the immutable Match the rules bound.
	Site       = match.Match
	Result     = match.Result
	Reject     = match.Reject
	Code       = match.Code
	MaskKind   = masks.Kind
	MaskTerm   = masks.Term
	MaskForm   = masks.Form
	QScale     = match.QScale
	RepeatedKV = match.RepeatedKV
	ScaleForm  = match.ScaleForm
	Fills      = masks.Fills
	Rows       = masks.Rows
	EmptyRows  = masks.EmptyRows
	NestedOp   = match.NestedOp
	FusedDesc  = match.FusedDesc
)

const (
	MaskNone     = masks.None
	MaskBool     = masks.Bool
	MaskAdditive = masks.Additive

	ScaleOnScores = match.ScaleOnScores
	ScaleOnQ      = match.ScaleOnQ
	ScaleOnK      = match.ScaleOnK
	ScaleAttr     = match.ScaleAttr
	ScaleDefault  = match.ScaleDefault
	ScalePerHead  = match.ScalePerHead

	EmptyZero        = masks.EmptyZero
	EmptyLiteral     = masks.EmptyLiteral
	EmptyLiteralZero = masks.EmptyLiteralZero
)

// FindSites matches every Softmax and fused attention op of g.
func FindSites(g *graph.Graph) *Result { return match.FindSites(g) }

// IsFusedAttention reports whether n is an already-fused attention op.
func IsFusedAttention(n *graph.Node) bool { return match.IsFusedAttention(n) }

// NestedSites lists the sites among ops.
func NestedSites(ops []NestedOp) []*Site { return match.NestedSites(ops) }

// ScopePath names one subgraph attribute of n below the path of n's graph.
func ScopePath(parent string, n *graph.Node, s *graph.Subgraph) string {
	return match.ScopePath(parent, n, s)
}

// OpName is "domain.Op" with ai.onnx for the default domain.
func OpName(n *graph.Node) string { return match.OpName(n) }

// LiftedNote says why a lifted op is a site: what its runtime does.
func LiftedNote(op string) string { return match.LiftedNote(op) }

// DescribeFused reads the sizes of an attnopt op from its operands.
func DescribeFused(n *graph.Node) *FusedDesc { return match.DescribeFused(n) }

// LiftedForm is a lifted site's form, its variant less the op it was lifted
// from; "" for a site of a pattern.
func LiftedForm(s *Site) string { return match.LiftedForm(s) }
