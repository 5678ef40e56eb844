package lower

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
)

// Rows with no visible key for targets whose op has no row attributes
// (MultiHeadAttention, ONNX Attention; docs/fully-masked-rows.md). Their
// runtimes compute a masked row's softmax literally over an additive bias,
// so the lowering writes the source's fills into that bias: a bool mask
// drops keys with mask_fill, and a causal term with a finite fill becomes a
// bias plane with it (combined once or summed, as the source combined it)
// instead of the op's causal flag, which drops with −inf.

// rowAttrs are the row attributes rowsBias and guard.go lower for the
// stock ops: the fills become bias values, the guard a Where, and
// mask_floor needs nothing (a stock op adds the mask's own values, so a
// row at a finite fill is already computed as the source rounds it).
var rowAttrs = []string{opdef.AttrEmptyRows, opdef.AttrMaskFill, opdef.AttrCausalFill, opdef.AttrFillOnce, opdef.AttrFillRound, opdef.AttrMaskFloor}

// causalAsBias reports whether the lowering must spell causal (and the
// window) as a bias plane carrying the causal fill.
func causalAsBias(o *canonical.SDPA) bool {
	r := o.Rows()
	return o.Attrs.Causal && r.Literal() && !math.IsInf(r.CausalFill, -1)
}

// rowsBias is the canonical op's mask as one additive bias in dt with the
// source's fills, the causal plane included when causalAsBias; nil when
// there is no mask and no such plane. asBool keeps a bool mask bool when
// nothing needs a fill (dropping with −inf).
func rowsBias(e *emit.Emitter, o *canonical.SDPA, dt graph.DType, asBool bool) *graph.Value {
	mask := o.Mask
	fill := emit.NegInf
	if o.Rows().Literal() {
		fill = o.Rows().MaskFill
	}
	if !causalAsBias(o) {
		if mask != nil && mask.Type.DType == graph.Bool && !math.IsInf(fill, -1) {
			mask = e.BoolToBias(mask, false, fill, dt)
		}
		return withBand(e, o, mask, dt, !asBool)
	}
	var m *graph.Value
	if mask != nil {
		if mask.Type.DType == graph.Bool {
			m = e.BoolToBias(mask, false, fill, dt)
		} else {
			m = biasOf(e, mask, dt)
		}
	}
	keep := bandPlane(e, o, true)
	fc := e.Scalar(dt, o.Rows().CausalFill)
	switch {
	case m == nil:
		return e.Op("Where", "", []*graph.Value{keep, e.Scalar(dt, 0), fc})
	case o.Rows().Once:
		return e.Op("Where", "", []*graph.Value{keep, m, e.Op("Min", "", []*graph.Value{m, fc})})
	}
	return e.Op("Add", "", []*graph.Value{m, e.Op("Where", "", []*graph.Value{keep, e.Scalar(dt, 0), fc})})
}

// bandPlane is the (Nq, Nk) keep plane of the band (the rule
// kernels/src/common/band.h states for the kernels): j ≤ i + Nk − Nq when
// causal is asked for and, with a window W, j > i + Nk − Nq − W; the window
// side alone for ops that take causal as a flag but have no window.
func bandPlane(e *emit.Emitter, o *canonical.SDPA, causal bool) *graph.Value {
	nq, nk := o.Lengths(e)
	rows := e.Unsqueeze(e.Positions(nq), 1)
	cols := e.Unsqueeze(e.Positions(nk), 0)
	last := e.Op("Add", "", []*graph.Value{rows, e.Op("Sub", "", []*graph.Value{nk, nq})})
	var keep *graph.Value
	if causal {
		keep = e.Op("LessOrEqual", "", []*graph.Value{cols, last})
	}
	if o.Attrs.SlidingWindow > 0 {
		first := e.Op("Sub", "", []*graph.Value{last, e.I64Scalar(o.Attrs.SlidingWindow)})
		in := e.Op("Greater", "", []*graph.Value{cols, first})
		if keep == nil {
			return in
		}
		keep = e.Op("And", "", []*graph.Value{keep, in})
	}
	return keep
}
