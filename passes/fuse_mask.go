package passes

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// maskInput builds the one mask tensor a fused op reads from the site's mask
// terms. A single bool term stays bool when the target reads bool masks
// (unless it fills with a finite value, which a bool cannot say: a fully
// masked row then averages its values as the original does); otherwise
// every term becomes additive in dtype dt and they are summed. No
// term is expanded over heads; Swin's per-window term is tiled over the
// batch only, which its 5-D view requires.
func maskInput(e *emitter, s *Site, dt graph.DType, boolOK bool) (*graph.Value, error) {
	if len(s.Masks) == 0 {
		return nil, nil
	}
	if len(s.Masks) == 1 && s.Masks[0].Kind == MaskBool && s.Masks[0].Fill == nil && boolOK {
		t := s.Masks[0]
		if t.Inverted {
			return e.op("Not", "", []*graph.Value{t.Value}), nil
		}
		return t.Value, nil
	}
	var sum *graph.Value
	for _, t := range s.Masks {
		v, err := termBias(e, s, t, dt)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = v
		} else {
			sum = e.op("Add", "", []*graph.Value{sum, v})
		}
	}
	return sum, nil
}

func termBias(e *emitter, s *Site, t MaskTerm, dt graph.DType) (*graph.Value, error) {
	var v *graph.Value
	switch {
	case t.Fill != nil:
		v = e.boolToBias(t.Value, t.Inverted, *t.Fill, dt)
	case t.Kind == MaskBool:
		v = e.boolToBias(t.Value, t.Inverted, negInfinity, dt)
	default:
		v = t.Value
		if v.Type.DType != dt && v.Type.DType != graph.Undefined {
			v = e.op("Cast", "", []*graph.Value{v}, graph.IntAttr("to", int64(dt)))
		}
	}
	if t.BatchView == nil {
		return v, nil
	}
	// (1|A, W, 1|H, Nq, Nk) in the (A, W, H, Nq, Nk) view → (A·W, 1|H, Nq, Nk).
	w, ok2 := t.BatchView[1].Value()
	sh, ok3 := v.Type.Shape.Ints()
	if !ok2 || !ok3 || len(sh) != 5 {
		return nil, fmt.Errorf("mask %q is added in a batch view with symbolic window count", t.Value.Name)
	}
	var target *graph.Value
	if a, ok := t.BatchView[0].Value(); ok {
		target = e.i64(a, w, sh[2], sh[3], sh[4])
	} else {
		// A = batch(Q) / W, computed at run time.
		b := e.shapeSlice(s.Q, 0, 1)
		a := e.op("Div", "", []*graph.Value{b, e.i64(w)})
		target = e.op("Concat", "", []*graph.Value{a, e.i64(w, sh[2], sh[3], sh[4])}, graph.IntAttr("axis", 0))
	}
	full := e.op("Expand", "", []*graph.Value{v, target})
	return e.reshape(full, -1, sh[2], sh[3], sh[4]), nil
}

// liftMaskRank makes a rank-3 mask of a rank-3 (bmm) site broadcast against
// the fused op's (B, 1, Nq, Nk) view.
func liftMaskRank(e *emitter, s *Site, m *graph.Value) *graph.Value {
	if m != nil && s.Rank == 3 && m.Type.Rank() == 3 {
		return e.unsqueeze(m, 1)
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
func biasOf(e *emitter, mask *graph.Value, dt graph.DType) *graph.Value {
	switch mask.Type.DType {
	case graph.Bool:
		return e.boolToBias(mask, false, negInfinity, dt)
	case dt:
		return mask
	}
	return e.op("Cast", "", []*graph.Value{mask}, graph.IntAttr("to", int64(dt)))
}
