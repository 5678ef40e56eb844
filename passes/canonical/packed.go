package canonical

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// com.microsoft.Attention's prelude: the site's Q, K, V, cache halves and
// mask_index term are typed placeholders until stage 1 emits the packed
// projection X·W (+ bias), a Slice per part, a Gather per cache half and
// the mask_index keep condition (passes/match/fused_msattention.go binds
// them in Match.Packed). The build's copy of the Match then reads the
// emitted values; the Match keeps its placeholders.

// keepConds emit each mask_index form's keep condition, bool and
// broadcasting against (B, H, S, T), from the op's input x and past (nil
// without a cache), which give the number of keys.
var keepConds = map[match.MaskIndexForm]func(e *emit.Emitter, m, x, past *graph.Value) *graph.Value{
	match.MaskKeyLengths: func(e *emit.Emitter, m, x, past *graph.Value) *graph.Value {
		return keyIndexCompare(e, "Less", keyPositions(e, x, past), e.Op("Cast", "", []*graph.Value{m}, graph.IntAttr("to", int64(graph.Int64))))
	},
	match.MaskKeySpans: func(e *emit.Emitter, m, x, past *graph.Value) *graph.Value {
		// ONNX Runtime clamps the start to T; keys j ≥ T do not exist,
		// so j ≥ start needs no clamp.
		ends := e.Reshape(e.Op("Cast", "", []*graph.Value{m}, graph.IntAttr("to", int64(graph.Int64))), 2, -1)
		j := keyPositions(e, x, past)
		end := e.Op("Gather", "", []*graph.Value{ends, e.I64Scalar(0)})
		start := e.Op("Gather", "", []*graph.Value{ends, e.I64Scalar(1)})
		before := keyIndexCompare(e, "Less", j, end)
		after := e.Op("Not", "", []*graph.Value{keyIndexCompare(e, "Less", j, start)})
		return e.Op("And", "", []*graph.Value{before, after})
	},
	match.MaskKeyPadding: func(e *emit.Emitter, m, _, _ *graph.Value) *graph.Value { return e.Unsqueeze(positive(e, m), 1, 2) },
	match.MaskQueryKey:   func(e *emit.Emitter, m, _, _ *graph.Value) *graph.Value { return e.Unsqueeze(positive(e, m), 1) },
}

// prelude emits a lifted op's operands into the build's copy of the site.
func (b *build) prelude(e *emit.Emitter) {
	p := b.s.Packed
	if p == nil {
		return
	}
	qkv := e.Op("MatMul", "", []*graph.Value{p.X, p.W})
	if p.Bias != nil {
		qkv = e.Op("Add", "", []*graph.Value{qkv, p.Bias})
	}
	sz := p.Sizes
	o := match.Operands{
		Q: sliceLast(e, qkv, 0, sz[0]),
		K: sliceLast(e, qkv, sz[0], sz[0]+sz[1]),
		V: sliceLast(e, qkv, sz[0]+sz[1], sz[0]+sz[1]+sz[2]),
	}
	if p.Past != nil {
		o.PastK = e.Op("Gather", "", []*graph.Value{p.Past, e.I64Scalar(0)})
		o.PastV = e.Op("Gather", "", []*graph.Value{p.Past, e.I64Scalar(1)})
	}
	if p.MaskIndex != nil {
		o.Keep = keepEmptyRows(e, keepConds[p.MaskForm](e, p.MaskIndex, p.X, p.Past))
	}
	b.s = b.s.Materialised(o)
}

// keyPositions is Range(0, T) over the keys attended: the S of x
// (B, S, ·), plus the P of past (2, B, H, P, D) when there is one.
func keyPositions(e *emit.Emitter, x, past *graph.Value) *graph.Value {
	t := e.ShapeSlice(x, 1, 2)
	if past != nil {
		t = e.Op("Add", "", []*graph.Value{t, e.ShapeSlice(past, 3, 4)})
	}
	return e.Positions(e.Squeeze(t, 0))
}

// keyIndexCompare is op(j, bound[b]) as (B, 1, 1, T) for key positions j
// (T) and a per-batch bound (B).
func keyIndexCompare(e *emit.Emitter, op string, j, bound *graph.Value) *graph.Value {
	return e.Unsqueeze(e.Op(op, "", []*graph.Value{j, e.Unsqueeze(bound, 1)}), 1, 2)
}

// positive is m > 0: ONNX Runtime keeps a key whose raw mask value is
// positive.
func positive(e *emit.Emitter, m *graph.Value) *graph.Value {
	zero := e.G.AddInit(e.Prefix+"/const", graph.NewTensor("", m.Type.DType, nil, make([]byte, m.Type.DType.Bits()/8)))
	return e.Op("Greater", "", []*graph.Value{m, zero})
}

// keepEmptyRows keeps every key of a row that keeps none: mask_filter_value
// is then added to all its scores, a constant the softmax cancels, so the
// row is unmasked attention. Exact, and it spares the fused op a softmax
// over scores rounded at the fill's magnitude (|-10000| has an fp32 ulp of
// 1e-3). The test is on the mask's own shape, never per head.
func keepEmptyRows(e *emit.Emitter, keep *graph.Value) *graph.Value {
	any := e.ReduceMaxLast(e.Op("Cast", "", []*graph.Value{keep}, graph.IntAttr("to", int64(graph.Float32))))
	empty := e.Op("Equal", "", []*graph.Value{any, e.Scalar(graph.Float32, 0)})
	return e.Op("Or", "", []*graph.Value{keep, empty})
}

// sliceLast is x[..., lo:hi].
func sliceLast(e *emit.Emitter, x *graph.Value, lo, hi int64) *graph.Value {
	if e.Opset < 10 {
		return e.Op("Slice", "", []*graph.Value{x}, graph.IntsAttr("starts", []int64{lo}), graph.IntsAttr("ends", []int64{hi}), graph.IntsAttr("axes", []int64{-1}))
	}
	return e.Op("Slice", "", []*graph.Value{x, e.I64(lo), e.I64(hi), e.I64(-1)})
}
