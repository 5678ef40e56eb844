package match

import "strings"

// Kinds the matcher and planner record, as typed values: the variant name
// of a site and the plan text are derived from them, never compared as text.

// ScaleForm is the set of places a site's scale was found.
type ScaleForm uint8

const (
	ScaleOnScores ScaleForm = 1 << iota // Mul/Div of the scores
	ScaleOnQ                            // of Q before the product
	ScaleOnK                            // of Kᵀ before the product
	ScaleAttr                           // a lifted op's scale attribute
	ScaleDefault                        // a lifted op's default 1/√Dqk
	ScalePerHead                        // a per-head/per-batch tensor of the scores, applied to Q (Site.QScales)
)

var scaleFormNames = []string{"scores", "q", "k", "attr", "default", "per_head"}

// String is "none", one place, or places joined by "_and_" (scores, q, k,
// …, per_head order): the names variant strings have always used.
func (f ScaleForm) String() string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for i, n := range scaleFormNames {
		if f&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "_and_")
}

// MaskForm is how a mask term is applied to the scores.
type MaskForm string

const (
	MaskFormAdd            MaskForm = "add"              // Add(scores, bias)
	MaskFormWhere          MaskForm = "where"            // Where(cond, scores, fill)
	MaskFormAddWhere       MaskForm = "add_where"        // Add(scores, Where(cond, 0, -inf))
	MaskFormCausalWhere    MaskForm = "causal_where"     // a slice of a lower-triangular buffer, or a causal Where condition
	MaskFormCausalAdd      MaskForm = "causal_add"       // a causal additive bias (match_causal_terms.go)
	MaskFormCausalAddWhere MaskForm = "causal_add_where" // a causal condition added as Where(cond, 0, -inf)
	MaskFormWindowView     MaskForm = "add_window_view"  // added in Swin's (B/w, w, …) view
	MaskFormInput          MaskForm = "input"            // a lifted op's mask input
	MaskFormRenorm         MaskForm = "renorm"           // P·mask renormalised after the softmax (jax2onnx, renorm.go)
	MaskFormSub            MaskForm = "sub"              // Sub(scores, bias), Funnel's s − INF·(1 − m) (mask.go)
)

// causal is the form of a site whose first term, applied as f, proved
// causal (match_causal_terms.go).
func (f MaskForm) causal() MaskForm {
	switch f {
	case MaskFormAdd:
		return MaskFormCausalAdd
	case MaskFormAddWhere:
		return MaskFormCausalAddWhere
	}
	return MaskFormCausalWhere
}
