package passes

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
)

// maskInput builds the one mask tensor a fused op reads from the site's mask
// terms. A single bool term stays bool when the target reads bool masks,
// with the fill it drops keys with (nil: −inf; the canonical op states it
// as mask_fill, rows.go); otherwise every term becomes additive in dtype dt
// (a finite fill as itself) and they are summed. No term is
// expanded over heads, except a term added in a batch view of the scores
// (Swin's windows, BLOOM's heads), which is tiled over that view's two split
// axes to reach the site's frame (unview).
func maskInput(e *emit.Emitter, s *Site, dt graph.DType, boolOK bool) (*graph.Value, *float64, error) {
	if len(s.Masks) == 0 {
		return nil, nil, nil
	}
	if len(s.Masks) == 1 && s.Masks[0].Kind == MaskBool && boolOK {
		t := s.Masks[0]
		v := t.Value
		if t.Inverted {
			v = e.Op("Not", "", []*graph.Value{v})
		}
		m, err := unview(e, s, t, v)
		return m, t.Fill, err
	}
	var sum *graph.Value
	for _, t := range s.Masks {
		v, err := termBias(e, s, t, dt)
		if err != nil {
			return nil, nil, err
		}
		if sum == nil {
			sum = v
		} else {
			sum = e.Op("Add", "", []*graph.Value{sum, v})
		}
	}
	return sum, nil, nil
}

func termBias(e *emit.Emitter, s *Site, t MaskTerm, dt graph.DType) (*graph.Value, error) {
	var v *graph.Value
	switch {
	case t.Fill != nil:
		v = e.BoolToBias(t.Value, t.Inverted, *t.Fill, dt)
	case t.Kind == MaskBool:
		v = e.BoolToBias(t.Value, t.Inverted, emit.NegInf, dt)
	default:
		v = t.Value
		if v.Type.DType != dt && v.Type.DType != graph.Undefined {
			v = e.Op("Cast", "", []*graph.Value{v}, graph.IntAttr("to", int64(dt)))
		}
	}
	return unview(e, s, t, v)
}

// unview brings a term added in a view of the scores whose batch axis is
// split in two, (A, W, …) — Swin's windows, BLOOM's heads — to the site's
// frame: (1|A, 1|W, …) is tiled over (A, W), then the two axes are merged.
// Trailing dims the term broadcasts over stay 1; a term without the A axis
// gets a leading 1, one without A and W broadcasts alike in both frames.
func unview(e *emit.Emitter, s *Site, t MaskTerm, v *graph.Value) (*graph.Value, error) {
	if t.BatchFold != nil {
		return unfoldTerm(e, t, v)
	}
	if t.BatchView == nil {
		return v, nil
	}
	sh := t.Value.Type.Shape
	r := len(sh)
	if r < s.Rank {
		return v, nil
	}
	if r == s.Rank {
		v, sh, r = e.Unsqueeze(v, 0), append(graph.Shape{graph.D(1)}, sh...), r+1
	}
	w, ok := t.BatchView[1].Value()
	if !ok || r < 3 {
		return nil, fmt.Errorf("mask %q is added in a batch view with symbolic window count", t.Value.Name)
	}
	// Expand broadcasts both ways: ones keep the term's own trailing dims
	// when they are not all known.
	ints, static := sh.Ints()
	trail := make([]int64, r-2)
	for i := range trail {
		trail[i] = 1
	}
	if static {
		trail = ints[2:]
	}
	lead := append([]int64{w}, trail...)
	var target *graph.Value
	if a, ok := t.BatchView[0].Value(); ok {
		target = e.I64(append([]int64{a}, lead...)...)
	} else {
		// A = batch(Q) / W, computed at run time.
		b := e.ShapeSlice(s.Q, 0, 1)
		a := e.Op("Div", "", []*graph.Value{b, e.I64(w)})
		target = e.Op("Concat", "", []*graph.Value{a, e.I64(lead...)}, graph.IntAttr("axis", 0))
	}
	full := e.Op("Expand", "", []*graph.Value{v, target})
	if static {
		return e.Reshape(full, append([]int64{-1}, trail...)...), nil
	}
	merged := e.Op("Concat", "", []*graph.Value{e.I64(-1), e.ShapeSlice(full, 2, int64(r))}, graph.IntAttr("axis", 0))
	return e.Op("Reshape", "", []*graph.Value{full, merged}), nil
}

// unfoldTerm splits the batch axis of a term added to bmm scores (1|A·W, …)
// into the (A, W, …) of the rank-4 site.
func unfoldTerm(e *emit.Emitter, t MaskTerm, v *graph.Value) (*graph.Value, error) {
	sh := t.Value.Type.Shape
	w, ok := t.BatchFold[1].Value()
	if len(sh) < 3 {
		return v, nil // it broadcasts over B·H, and so over (B, H)
	}
	if !ok || len(sh) != 3 {
		return nil, fmt.Errorf("mask %q is added to scores whose head count is symbolic", t.Value.Name)
	}
	if sh[0].Static() && sh[0].C == 1 {
		return e.Unsqueeze(v, 0), nil
	}
	// (A·W, 1, x, y) → (A, W, x, y); Reshape's 0 copies x and y, known or not.
	return e.Reshape(e.Unsqueeze(v, 1), -1, w, 0, 0), nil
}

// liftMaskRank makes a rank-3 mask of a rank-3 (bmm) site broadcast against
// the fused op's (B, 1, Nq, Nk) view.
func liftMaskRank(e *emit.Emitter, s *Site, m *graph.Value) *graph.Value {
	if m != nil && s.Rank == 3 && m.Type.Rank() == 3 {
		return e.Unsqueeze(m, 1)
	}
	return m
}

// scoreDType is the type the scores are computed in (float32 when the site
// casts around its softmax).
func scoreDType(s *Site) graph.DType {
	if s.SoftCasts {
		return graph.Float32
	}
	return s.DType
}

// biasOf is the canonical mask as an additive bias in dtype dt, for ops
// that take no bool mask.
func biasOf(e *emit.Emitter, mask *graph.Value, dt graph.DType) *graph.Value {
	switch mask.Type.DType {
	case graph.Bool:
		return e.BoolToBias(mask, false, emit.NegInf, dt)
	case dt:
		return mask
	}
	return e.Op("Cast", "", []*graph.Value{mask}, graph.IntAttr("to", int64(dt)))
}

// withBand adds a sliding window to the canonical op's mask for ops that
// have no window attribute: the (Nq, Nk) band j > i + Nk − Nq − W (one
// plane, not per batch or head: what the model's own band held), as a bool
// keep-mask when bias is false and mask is bool or absent, else additive in
// dt. It returns mask unchanged without a window.
func withBand(e *emit.Emitter, o *SDPA, mask *graph.Value, dt graph.DType, bias bool) *graph.Value {
	if o.Window <= 0 {
		return mask
	}
	nq, nk := o.lengths(e)
	rows := e.Unsqueeze(e.Positions(nq), 1)
	cols := e.Unsqueeze(e.Positions(nk), 0)
	first := e.Op("Sub", "", []*graph.Value{e.Op("Sub", "", []*graph.Value{nk, nq}), e.I64Scalar(o.Window)})
	keep := e.Op("Greater", "", []*graph.Value{cols, e.Op("Add", "", []*graph.Value{rows, first})})
	switch {
	case !bias && (mask == nil || mask.Type.DType == graph.Bool):
		if mask == nil {
			return keep
		}
		return e.Op("And", "", []*graph.Value{mask, keep})
	case mask == nil:
		return biasOf(e, keep, dt)
	}
	return e.Op("Add", "", []*graph.Value{biasOf(e, mask, dt), biasOf(e, keep, dt)})
}
