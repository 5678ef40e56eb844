package passes

import (
	"github.com/attnopt/attnopt/graph"
)

// Fully masked rows (docs/fully-masked-rows.md). attnopt.FlashAttention
// gives a row that sees no key what the canonical op states (rows.go);
// MultiHeadAttention and ONNX Attention in ONNX Runtime give NaN, zeros or
// a uniform average there, by version, so their rewrites set such rows
// explicitly where the source's value is not what the runtime computes,
// with a guard computed from the mask (its size, never N² per head).

// guardRows sets to value the rows of out (the lowered op's result in the
// canonical layout) whose mask admits no key.
func guardRows(e *emitter, o *SDPA, out *graph.Value, value float64) *graph.Value {
	if o.Mask == nil {
		return out
	}
	keep := o.Mask
	if keep.Type.DType != graph.Bool {
		keep = e.op("Not", "", []*graph.Value{e.op("Equal", "", []*graph.Value{keep, e.scalar(keep.Type.DType, negInfinity)})})
	}
	if o.Window > 0 {
		// A window empties the rows whose last W keys are all masked: the
		// (Nq, Nk) band plane is needed (what the lowering's bias holds too).
		keep = e.op("And", "", []*graph.Value{keep, causalPlane(e, o)})
	}
	keepF := e.op("Cast", "", []*graph.Value{keep}, graph.IntAttr("to", int64(graph.Float32)))
	empty := e.op("Equal", "", []*graph.Value{e.reduceMaxLast(keepF), e.scalar(graph.Float32, 0)})
	if o.Causal && o.Window == 0 {
		empty = causalEmptyRows(e, o, keepF, empty)
	}
	// empty is (…, Nq, 1) at the mask's rank; a rank-3 op's mask carries a
	// head axis of 1 that its output has not.
	if empty.Type.Rank() > out.Type.Rank() && out.Type.Rank() == 3 {
		empty = e.squeeze(empty, 1)
	}
	return e.op("Where", "", []*graph.Value{empty, e.scalar(out.Type.DType, value), out})
}

// causalEmptyRows adds the rows the causal limit empties: query i keeps
// only keys j ≤ i + Nk − Nq, so its row is empty when the mask's first kept
// key lies beyond that. It needs the mask's first kept index per row, never
// an Nq×Nk tensor.
func causalEmptyRows(e *emitter, o *SDPA, keepF, empty *graph.Value) *graph.Value {
	first := e.op("Cast", "", []*graph.Value{e.op("ArgMax", "", []*graph.Value{keepF}, graph.IntAttr("axis", -1), graph.IntAttr("keepdims", 1))}, graph.IntAttr("to", int64(graph.Float32)))
	nq, nk := o.lengths(e)
	limit := e.op("Add", "", []*graph.Value{e.positions(nq), e.op("Sub", "", []*graph.Value{nk, nq})})
	limit = e.unsqueeze(e.op("Cast", "", []*graph.Value{limit}, graph.IntAttr("to", int64(graph.Float32))), 1)
	return e.op("Or", "", []*graph.Value{empty, e.op("Greater", "", []*graph.Value{first, limit})})
}

// reduceMaxLast is ReduceMax over the last axis, keeping it (axes are an
// attribute before opset 18).
func (e *emitter) reduceMaxLast(v *graph.Value) *graph.Value {
	if e.opset < 18 {
		return e.op("ReduceMax", "", []*graph.Value{v}, graph.IntsAttr("axes", []int64{-1}), graph.IntAttr("keepdims", 1))
	}
	return e.op("ReduceMax", "", []*graph.Value{v, e.i64(-1)}, graph.IntAttr("keepdims", 1))
}
