package lower

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
)

// Fully masked rows (docs/fully-masked-rows.md). attnopt.FlashAttention
// gives a row that sees no key what the canonical op states (rows.go);
// MultiHeadAttention and ONNX Attention in ONNX Runtime give NaN, zeros or
// a uniform average there, by version, so their rewrites set such rows
// explicitly where the source's value is not what the runtime computes,
// with a guard computed from the mask (its size, never N² per head).

// guardRows sets to value the rows of out (the lowered op's result in the
// canonical layout) whose mask admits no key.
func guardRows(e *emit.Emitter, o *canonical.SDPA, out *graph.Value, value float64) *graph.Value {
	if o.Mask == nil {
		return out
	}
	keep := o.Mask
	if keep.Type.DType != graph.Bool {
		keep = e.Op("Not", "", []*graph.Value{e.Op("Equal", "", []*graph.Value{keep, e.Scalar(keep.Type.DType, emit.NegInf)})})
	}
	if o.Attrs.SlidingWindow > 0 {
		// A window empties the rows whose last W keys are all masked: the
		// (Nq, Nk) band plane is needed (what the lowering's bias holds too).
		keep = e.Op("And", "", []*graph.Value{keep, bandPlane(e, o, true)})
	}
	keepF := e.Op("Cast", "", []*graph.Value{keep}, graph.IntAttr("to", int64(graph.Float32)))
	empty := e.Op("Equal", "", []*graph.Value{e.ReduceMaxLast(keepF), e.Scalar(graph.Float32, 0)})
	if o.Attrs.Causal && o.Attrs.SlidingWindow == 0 {
		empty = causalEmptyRows(e, o, keepF, empty)
	}
	// empty is (…, Nq, 1) at the mask's rank; a rank-3 op's mask carries a
	// head axis of 1 that its output has not.
	if empty.Type.Rank() > out.Type.Rank() && out.Type.Rank() == 3 {
		empty = e.Squeeze(empty, 1)
	}
	return e.Op("Where", "", []*graph.Value{empty, e.Scalar(out.Type.DType, value), out})
}

// causalEmptyRows adds the rows the causal limit empties: query i keeps
// only keys j ≤ i + Nk − Nq, so its row is empty when the mask's first kept
// key lies beyond that. It needs the mask's first kept index per row, never
// an Nq×Nk tensor.
func causalEmptyRows(e *emit.Emitter, o *canonical.SDPA, keepF, empty *graph.Value) *graph.Value {
	first := e.Op("Cast", "", []*graph.Value{e.Op("ArgMax", "", []*graph.Value{keepF}, graph.IntAttr("axis", -1), graph.IntAttr("keepdims", 1))}, graph.IntAttr("to", int64(graph.Float32)))
	nq, nk := o.Lengths(e)
	limit := e.Op("Add", "", []*graph.Value{e.Positions(nq), e.Op("Sub", "", []*graph.Value{nk, nq})})
	limit = e.Unsqueeze(e.Op("Cast", "", []*graph.Value{limit}, graph.IntAttr("to", int64(graph.Float32))), 1)
	return e.Op("Or", "", []*graph.Value{empty, e.Op("Greater", "", []*graph.Value{first, limit})})
}
