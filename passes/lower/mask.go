package lower

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
)

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
func withBand(e *emit.Emitter, o *canonical.SDPA, mask *graph.Value, dt graph.DType, bias bool) *graph.Value {
	if o.Attrs.SlidingWindow <= 0 {
		return mask
	}
	keep := bandPlane(e, o, false)
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
