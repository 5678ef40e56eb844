package match

import (
	"github.com/attnopt/attnopt/graph"
)

// Per-head and per-batch scales. Swin V2's cosine attention multiplies the
// scores by exp(clamp(logit_scale)) of shape (H, 1, 1); anything that is 1 on
// the query and key axes scales whole rows of Q·Kᵀ, so
// (Q·Kᵀ)·c = (Q·c)·Kᵀ exactly and the rewrite applies c to Q.

// peelTensorScale takes Mul(scores, c) or Div(scores, c) with c a tensor of
// size 1 on the last two axes. handled is false when n is not that form, so
// the caller reports its own reason.
func (m *matcher) peelTensorScale(n *graph.Node, s *draft) (x *graph.Value, r *Reject, handled bool) {
	x, c := n.Input(0), n.Input(1)
	if n.Is("Mul") && scoreLike(c) && !scoreLike(x) {
		x, c = c, x
	}
	if !scoreLike(x) || scoreLike(c) || !rowConstant(c, x) {
		return nil, nil, false
	}
	s.QScales = append(s.QScales, QScale{Value: c, Div: n.Is("Div"), masksAfter: maskCount(s)})
	s.ScaleForm |= ScalePerHead
	return x, nil, true
}

// rowConstant reports whether c is a float tensor that is statically 1 on
// the last two axes of the scores x and has no more axes than x.
func rowConstant(c, x *graph.Value) bool {
	ct, xt := c.Type, x.Type
	if !ct.Ranked || !xt.Ranked || !ct.DType.IsFloat() || len(ct.Shape) > len(xt.Shape) || len(ct.Shape) == 0 {
		return false
	}
	r := len(ct.Shape)
	for i := max(0, r-2); i < r; i++ {
		if v, ok := ct.Shape[i].Value(); !ok || v != 1 {
			return false
		}
	}
	return true
}

// checkQScales makes sure each scale broadcasts into Q without growing it:
// every leading axis is 1 or Q's own size.
func checkQScales(s *draft) *Reject {
	qs := s.Q.Type.Shape
	for _, t := range s.QScales {
		if maskCount(s) > t.masksAfter {
			// (scores + mask)·c scales the mask too; c on Q would not.
			return reject(CodeScale, t.Value, "the tensor %q scales masked scores", t.Value.Name)
		}
		cs := t.Value.Type.Shape
		if len(cs) > len(qs) {
			return reject(CodeScale, t.Value, "per-head scale %q has rank %d, more than Q's %d", t.Value.Name, len(cs), len(qs))
		}
		off := len(qs) - len(cs)
		for i, d := range cs {
			if v, ok := d.Value(); (ok && v == 1) || d.Equal(qs[off+i]) {
				continue
			}
			return reject(CodeScale, t.Value, "scale %q (shape %s) does not broadcast over Q %q (shape %s) without growing it", t.Value.Name, t.Value.Type, s.Q.Name, s.Q.Type)
		}
	}
	return nil
}

// maskCount counts the mask terms peeled so far, causal ones included.
func maskCount(s *draft) int {
	n := len(s.Masks) + len(s.causal.Terms)
	if s.Causal {
		n++
	}
	return n
}
