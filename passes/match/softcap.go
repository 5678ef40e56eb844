package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Gemma 2 caps its scores before the mask: c·tanh(scale·Q·Kᵀ / c) + mask,
// exported as Mul(Tanh(Div(x, c)), c), Mul by 1/c for the Div, either
// operand order, and fp16 graphs cast to float around the Tanh. The rule
// (scoreRules, scores.go) takes the outer Mul, the Tanh and those casts and
// sets Match.Softcap to c; the scale inside the Tanh is then an ordinary
// scale of the scores, multiplied by c here, so the inner Div by c (or a
// factor an exporter folded with the head-dim scale) cancels to the site's
// scale: the canonical op computes softcap·tanh(scale·Q·Kᵀ / softcap).

// softcapOf reads n as Mul(c, Tanh(x)) with casts between: c, and the
// nodes from n's Tanh operand back to the Tanh.
func softcapOf(n *graph.Node) (float64, []*graph.Node, bool) {
	for i := 0; i < 2; i++ {
		c, ok := n.Input(1 - i).Scalar()
		if !ok {
			continue
		}
		var took []*graph.Node
		p := n.Input(i).Producer()
		for p != nil && p.IsFloatCast() && len(took) < 2 {
			took = append(took, p)
			p = p.Input(0).Producer()
		}
		if p != nil && p.Is("Tanh") {
			return c, append(took, p), true
		}
	}
	return 0, nil, false
}

func capsScores(n *graph.Node) bool {
	_, _, ok := softcapOf(n)
	return ok
}

// peelSoftcap takes Mul(c, Tanh(y)) off the scores and returns y, below any
// float casts. Nothing may act on the capped scores before n but masks: a
// scale there would scale the cap.
func (m *matcher) peelSoftcap(n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	c, took, _ := softcapOf(n)
	switch {
	case !(c > 0) || math.IsInf(c, 0):
		return nil, nil, reject(CodeScale, n, "node %q caps the scores at %g; a softcap must be finite and > 0", n.Label(), c)
	case s.Softcap != 0:
		return nil, nil, reject(CodeScoreChain, n, "node %q caps scores that are already capped", n.Label())
	case s.ScaleForm != 0 || len(s.QScales) > 0:
		return nil, nil, reject(CodeScale, n, "the scores are scaled after the softcap of node %q; only softcap(scale·Q·Kᵀ) is fused", n.Label())
	}
	for _, x := range took {
		if r := m.onlyUse(x.Output(0)); r != nil {
			return nil, nil, r
		}
	}
	y := took[len(took)-1].Input(0)
	for p := y.Producer(); p != nil && p.IsFloatCast() && len(took) < 4; p = y.Producer() {
		if r := m.onlyUse(y); r != nil {
			return nil, nil, r
		}
		took, y = append(took, p), p.Input(0)
	}
	s.Softcap = c
	s.Scale *= c
	return y, took, nil
}

// capBeforeMask refuses a mask step met after the softcap, walking back:
// softcap(scores + mask) leaves a dropped key at −c, which the fused ops
// cannot state (they cap, then mask).
func capBeforeMask(p *graph.Node, s *draft) *Reject {
	if s.Softcap == 0 || !(p.Is("Add") || p.Is("Where")) {
		return nil
	}
	return reject(CodeScoreChain, p, "node %q masks the scores before the softcap; only softcap(scale·Q·Kᵀ) + mask (Gemma 2's order) is fused", p.Label())
}
