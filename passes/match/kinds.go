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
