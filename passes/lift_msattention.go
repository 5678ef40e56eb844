package passes

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/schema"
)

// com.microsoft.Attention is ONNX Runtime's BERT/GPT-2 attention: one packed
// projection X·W + bias gives Q, K and V, then multi-head attention with an
// optional mask_index and attention_bias. ONNX Runtime's CPU kernel
// materialises the B·H·S·T scores and a B·S·T mask (bench/README.md), so
// the op is lifted (T = P + S with a cache of P keys). Q, K and V do not
// exist in the graph: they are typed placeholders until stage 1
// (lift_site.go), when the site's prelude emits MatMul, Add and a Slice per
// part, the cache halves and the mask_index as a mask term;
// the site is then a (B, S, H·D) one like a lifted MultiHeadAttention.

// maskIndexForm is one of the shapes mask_index comes in.
type maskIndexForm int

const (
	maskKeyLengths maskIndexForm = iota // (B): keys j < len[b] are kept (right padding)
	maskKeySpans                        // (2B): ends then starts; keys start ≤ j < end (left padding)
	maskKeyPadding                      // (B, T): raw 0/1 per key
	maskQueryKey                        // (B, S, T): raw 0/1 per query and key
)

// maskIndexRule recognises one form from mask_index's shape and emits its
// keep condition, bool and broadcasting against (B, H, S, T).
type maskIndexRule struct {
	form  maskIndexForm
	match func(m graph.Shape, s *Site) bool
	// keep gets the op's input x and past (nil without a cache), which
	// give the number of keys.
	keep func(e *emit.Emitter, m, x, past *graph.Value) *graph.Value
	// keepShape is the condition's shape.
	keepShape func(m graph.Shape, s *Site) graph.Shape
}

var maskIndexRules = []maskIndexRule{
	{maskKeyLengths,
		func(m graph.Shape, s *Site) bool { return len(m) == 1 && m[0].Equal(s.Batch) },
		func(e *emit.Emitter, m, x, past *graph.Value) *graph.Value {
			return keyIndexCompare(e, "Less", keyPositions(e, x, past), e.Op("Cast", "", []*graph.Value{m}, graph.IntAttr("to", int64(graph.Int64))))
		},
		keyRowShape},
	{maskKeySpans,
		func(m graph.Shape, s *Site) bool { return len(m) == 1 && m[0].Equal(graph.D(2).Mul(s.Batch)) },
		func(e *emit.Emitter, m, x, past *graph.Value) *graph.Value {
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
		keyRowShape},
	{maskKeyPadding,
		func(m graph.Shape, s *Site) bool { return len(m) == 2 && m[1].Equal(s.KVLen) },
		func(e *emit.Emitter, m, _, _ *graph.Value) *graph.Value { return e.Unsqueeze(positive(e, m), 1, 2) },
		func(m graph.Shape, s *Site) graph.Shape { return graph.Shape{m[0], graph.D(1), graph.D(1), m[1]} }},
	{maskQueryKey,
		func(m graph.Shape, s *Site) bool { return len(m) == 3 && m[1].Equal(s.QLen) && m[2].Equal(s.KVLen) },
		func(e *emit.Emitter, m, _, _ *graph.Value) *graph.Value { return e.Unsqueeze(positive(e, m), 1) },
		func(m graph.Shape, s *Site) graph.Shape { return graph.Shape{m[0], graph.D(1), m[1], m[2]} }},
}

func keyRowShape(m graph.Shape, s *Site) graph.Shape {
	return graph.Shape{s.Batch, graph.D(1), graph.D(1), s.KVLen}
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

// msAttentionRefusals are attributes and inputs with no exact lift, each
// with its reason.
var msAttentionRefusals = []struct {
	attr  string
	input int
	why   string
}{
	{"do_rotary", -1, "do_rotary: the rotary embedding is applied inside the op"},
	{"past_present_share_buffer", -1, "past_present_share_buffer: the cache is updated in place"},
	{"", 6, "past_sequence_length (a shared-buffer cache) is not lifted"},
}

// liftMSAttention lifts com.microsoft.Attention, with its cache: past
// (2, B, H, P, D) splits into the site's PastK/PastV and present is the
// two full tensors stacked again.
func liftMSAttention(g *graph.Graph, n *graph.Node) (*Site, *Reject) {
	at := n.Label()
	x, w, bias, mask := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if x == nil || w == nil {
		return nil, reject(at, "Attention without input or weights")
	}
	for _, r := range msAttentionRefusals {
		if (r.attr != "" && n.AttrInt(r.attr, 0) != 0) || (r.input >= 0 && n.Input(r.input) != nil) {
			return nil, reject(at, "%s", r.why)
		}
	}
	if x.Type.Rank() != 3 || w.Type.Rank() != 2 {
		return nil, reject(x.Name, "input %q is not (B, S, D_in) or weights %q not (D_in, ·)", x.Name, w.Name)
	}
	h := n.AttrInt("num_heads", 0)
	if h <= 0 {
		return nil, reject(at, "Attention without num_heads")
	}
	sizes, rj := packedSizes(n, w)
	if rj != nil {
		return nil, rj
	}
	xs := x.Type.Shape
	part := func(name string, size int64) *graph.Value {
		return &graph.Value{Name: at + "/" + name, Kind: graph.KindNode, Type: graph.TensorOf(x.Type.DType, graph.Shape{xs[0], xs[1], graph.D(size)})}
	}
	s := liftedBase(n, part("Q", sizes[0]), part("K", sizes[1]), part("V", sizes[2]))
	if rj := splitPacked(s, h, h); rj != nil {
		return nil, rj
	}
	s.DType = x.Type.DType
	past := n.Input(4)
	if past != nil {
		ps := past.Type.Shape
		if past.Type.Rank() != 5 || !ps[0].Equal(graph.D(2)) || !ps[2].Equal(s.Heads) || !ps[4].Equal(s.HeadDim) {
			return nil, reject(past.Name, "past %q is not (2, B, H, P, D) for %s heads of %s", past.Name, s.Heads, s.HeadDim)
		}
		kv := graph.TensorOf(past.Type.DType, ps[1:])
		s.PastK = &graph.Value{Name: at + "/past_key", Kind: graph.KindNode, Type: kv}
		s.PastV = &graph.Value{Name: at + "/past_value", Kind: graph.KindNode, Type: kv}
		s.KVLen = ps[3].Add(s.KVLen)
	}
	// present is K and V (after the cache), stacked: the rewrite computes
	// both anyway.
	s.WantPresent, s.stackedPresent = usedOutput(g, n, 1), true
	if rj := liftScale(s, n); rj != nil {
		return nil, rj
	}
	if ab := n.Input(5); ab != nil {
		if rj := liftMask(s, ab, "attention_bias"); rj != nil {
			return nil, rj
		}
		if s.Mask == MaskBool {
			return nil, reject(ab.Name, "attention_bias %q is %s, not float", ab.Name, ab.Type.DType)
		}
	}
	if n.AttrInt("unidirectional", 0) != 0 {
		// Query i sees keys j ≤ P + i: bottom-right, the fused ops'
		// alignment (ONNX Runtime skips the mask for one query, which
		// sees every key either way).
		s.Causal = true
	}
	var keep *maskIndexRule
	if mask != nil {
		if keep, rj = liftMaskIndex(s, n, mask, g.Model().Opset("")); rj != nil {
			return nil, rj
		}
	}
	s.prelude = func(e *emit.Emitter, s *Site) {
		qkv := e.Op("MatMul", "", []*graph.Value{x, w})
		if bias != nil {
			qkv = e.Op("Add", "", []*graph.Value{qkv, bias})
		}
		s.Q = sliceLast(e, qkv, 0, sizes[0])
		s.K = sliceLast(e, qkv, sizes[0], sizes[0]+sizes[1])
		s.V = sliceLast(e, qkv, sizes[0]+sizes[1], sizes[0]+sizes[1]+sizes[2])
		if past != nil {
			s.PastK = e.Op("Gather", "", []*graph.Value{past, e.I64Scalar(0)})
			s.PastV = e.Op("Gather", "", []*graph.Value{past, e.I64Scalar(1)})
		}
		if keep != nil {
			// A new slice: the placeholder's stays for a failed build.
			masks := append([]MaskTerm(nil), s.Masks...)
			last := &masks[len(masks)-1]
			last.Value = keepEmptyRows(e, keep.keep(e, mask, x, past))
			s.Masks, s.MaskValue = masks, masks[0].Value
		}
	}
	s.Variant = liftVariant(s)
	return s, nil
}

// packedSizes are the hidden sizes of Q, K and V in the weights' columns.
func packedSizes(n *graph.Node, w *graph.Value) ([3]int64, *Reject) {
	sz, at, err := schema.PackedSizes(n, w)
	if err != nil {
		return sz, reject(at, "%s", err.Error())
	}
	return sz, nil
}

// liftMaskIndex adds mask_index as an additive term: ONNX Runtime adds
// mask_filter_value (-10000 by default, finite) to the scores of dropped
// keys, so a row with every key dropped is a softmax over all of them, not
// zeros. The term is Where(keep, 0, mask_filter_value), read broadcast.
func liftMaskIndex(s *Site, n *graph.Node, m *graph.Value, opset int64) (*maskIndexRule, *Reject) {
	if m.Type.DType != graph.Int32 || !m.Type.Ranked {
		return nil, reject(m.Name, "mask_index %q is %s of unknown rank; ONNX Runtime takes int32", m.Name, m.Type)
	}
	if s.Causal {
		// ONNX Runtime adds mask_filter_value for padding and again for
		// the future, so a query whose past keys are all padding attends
		// to future keys; the fused ops' causal flag drops them.
		return nil, reject(n.Label(), "causal (unidirectional or a triangular attention_bias) with mask_index: ONNX Runtime adds a finite mask_filter_value for both, so a row whose earlier keys are all padding attends to later keys, which the fused ops' causal flag drops")
	}
	sh := m.Type.Shape
	if len(sh) == 4 {
		return nil, reject(m.Name, "4-D mask_index %q (Megatron's (B, 1, max, max)): ONNX Runtime's CPU kernel does not run it", m.Name)
	}
	for i := range maskIndexRules {
		r := &maskIndexRules[i]
		if !r.match(sh, s) {
			continue
		}
		if r.form == maskKeyLengths || r.form == maskKeySpans {
			if opset < 11 {
				return nil, reject(m.Name, "1-D mask_index at opset %d: the key positions need Range (opset 11)", opset)
			}
		}
		fill := float64(n.AttrFloat("mask_filter_value", -10000))
		keep := &graph.Value{Name: n.Label() + "/mask_index_keep", Kind: graph.KindNode, Type: graph.TensorOf(graph.Bool, r.keepShape(sh, s))}
		t := MaskTerm{Kind: MaskAdditive, Value: keep, Fill: &fill, Form: MaskFormInput}
		s.Masks = append(s.Masks, t)
		s.Mask, s.MaskForm, s.MaskValue = MaskAdditive, s.Masks[0].Form, s.Masks[0].Value
		return r, nil
	}
	return nil, reject(m.Name, "mask_index %q of shape %s is none of (B), (2B), (B, T), (B, S, T) for B %s, S = T %s", m.Name, sh, s.Batch, s.QLen)
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

// withPrelude emits a lifted op's prelude, then the replacement; when the
// build fails the site gets its placeholders back, so it is reported as it
// was matched.
func withPrelude(e *emit.Emitter, s *Site, build func(e *emit.Emitter) (*graph.Value, error)) (*graph.Value, error) {
	if s.prelude == nil {
		return build(e)
	}
	saved := *s
	s.prelude(e, s)
	out, err := build(e)
	if err != nil {
		*s = saved
	}
	return out, err
}
