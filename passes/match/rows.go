package match

import "github.com/attnopt/attnopt/passes/match/resolve"

// MaySeeNoKey reports whether some query row of the site can see no key:
// it has a mask, or causal attention with possibly more queries than keys
// (the condition resolve.Rows states rows under).
func (s *Match) MaySeeNoKey() bool {
	return len(s.Masks) > 0 || (s.Causal && !resolve.AtMost(s.QLen, s.KVLen))
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
