package passes

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
)

// Per-head and per-batch scales. Swin V2's cosine attention multiplies the
// scores by exp(clamp(logit_scale)) of shape (H, 1, 1); anything that is 1 on
// the query and key axes scales whole rows of Q·Kᵀ, so
// (Q·Kᵀ)·c = (Q·c)·Kᵀ exactly and the rewrite applies c to Q.

// peelTensorScale takes Mul(scores, c) or Div(scores, c) with c a tensor of
// size 1 on the last two axes. handled is false when n is not that form, so
// the caller reports its own reason.
func (m *matcher) peelTensorScale(n *graph.Node, s *Site) (x *graph.Value, r *Reject, handled bool) {
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
func (m *matcher) checkQScales(s *Site) *Reject {
	qs := s.Q.Type.Shape
	for _, t := range s.QScales {
		if maskCount(s) > t.masksAfter {
			// (scores + mask)·c scales the mask too; c on Q would not.
			return reject(t.Value.Name, "the tensor %q scales masked scores", t.Value.Name)
		}
		cs := t.Value.Type.Shape
		if len(cs) > len(qs) {
			return reject(t.Value.Name, "per-head scale %q has rank %d, more than Q's %d", t.Value.Name, len(cs), len(qs))
		}
		off := len(qs) - len(cs)
		for i, d := range cs {
			if v, ok := d.Value(); (ok && v == 1) || d.Equal(qs[off+i]) {
				continue
			}
			return reject(t.Value.Name, "scale %q (shape %s) does not broadcast over Q %q (shape %s) without growing it", t.Value.Name, t.Value.Type, s.Q.Name, s.Q.Type)
		}
	}
	return nil
}

// maskCount counts the mask terms peeled so far, causal ones included.
func maskCount(s *Site) int {
	n := len(s.Masks) + len(s.causalTerms)
	if s.Causal {
		n++
	}
	return n
}

// scaledQ is Q as (…, Nq, Dqk) (naturalQ) with the site's per-head scales
// applied, in Q's type. Only matched sites have QScales and only lifted
// ones pack heads, so the scales never meet a Q whose heads naturalQ split.
func scaledQ(e *emit.Emitter, s *Site) *graph.Value { return applyQScales(e, s, naturalQ(e, s)) }

// applyQScales multiplies q, the site's Q in its (…, Nq, Dqk) layout, by
// the per-head scales.
func applyQScales(e *emit.Emitter, s *Site, q *graph.Value) *graph.Value {
	for _, t := range s.QScales {
		c := t.Value
		if c.Type.DType != q.Type.DType {
			c = e.Op("Cast", "", []*graph.Value{c}, graph.IntAttr("to", int64(q.Type.DType)))
		}
		op := "Mul"
		if t.Div {
			op = "Div"
		}
		q = e.Op(op, "", []*graph.Value{q, c})
	}
	return q
}
