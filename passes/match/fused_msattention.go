package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/schema"
)

// com.microsoft.Attention is ONNX Runtime's BERT/GPT-2 attention: one packed
// projection X·W + bias gives Q, K and V, then multi-head attention with an
// optional mask_index and attention_bias. ONNX Runtime's CPU kernel
// materialises the B·H·S·T scores and a B·S·T mask (bench/README.md), so
// the op is lifted (T = P + S with a cache of P keys). Q, K and V do not
// exist in the graph: they are typed placeholders until stage 1
// (passes/canonical/packed.go) emits MatMul, Add and a Slice per part, the
// cache halves and the mask_index as a mask term (Match.Packed);
// the site is then a (B, S, H·D) one like a lifted MultiHeadAttention.

// MaskIndexForm is one of the shapes mask_index comes in.
type MaskIndexForm int

const (
	MaskKeyLengths MaskIndexForm = iota // (B): keys j < len[b] are kept (right padding)
	MaskKeySpans                        // (2B): ends then starts; keys start ≤ j < end (left padding)
	MaskKeyPadding                      // (B, T): raw 0/1 per key
	MaskQueryKey                        // (B, S, T): raw 0/1 per query and key
)

// PackedQKV is com.microsoft.Attention's packed projection as the site
// binds it: stage 1 emits X·W (+ Bias), slices Sizes off it for Q, K and V,
// splits Past (2, B, H, P, D) into PastK/PastV, and computes MaskIndex's
// keep condition by its form into the site's last mask term.
type PackedQKV struct {
	X, W, Bias *graph.Value
	Sizes      [3]int64
	Past       *graph.Value
	MaskIndex  *graph.Value // nil without one
	MaskForm   MaskIndexForm
}

// Operands are the values stage 1 emits for a packed site's placeholders:
// the projection's Q, K, V, the cache's halves (nil without one) and
// mask_index's keep condition (nil without one).
type Operands struct {
	Q, K, V, PastK, PastV, Keep *graph.Value
}

// Materialised is a copy of the site with its placeholders bound to the
// emitted operands; the Match itself stays as Find returned it (its mask
// terms keep their placeholder, the copy gets a new slice).
func (s Match) Materialised(o Operands) Match {
	s.Q, s.K, s.V = o.Q, o.K, o.V
	if o.PastK != nil {
		s.PastK, s.PastV = o.PastK, o.PastV
	}
	if o.Keep != nil {
		s.Masks = append([]masks.Term(nil), s.Masks...)
		last := &s.Masks[len(s.Masks)-1]
		last.Value, last.Placeholder = o.Keep, false
	}
	return s
}

// maskIndexRule recognises one form from mask_index's shape; stage 1 emits
// its keep condition, bool and broadcasting against (B, H, S, T), with the
// shape keepShape says.
type maskIndexRule struct {
	form      MaskIndexForm
	match     func(m graph.Shape, s *draft) bool
	keepShape func(m graph.Shape, s *draft) graph.Shape
}

var maskIndexRules = []maskIndexRule{
	{MaskKeyLengths, func(m graph.Shape, s *draft) bool { return len(m) == 1 && m[0].Equal(s.Batch) }, keyRowShape},
	{MaskKeySpans, func(m graph.Shape, s *draft) bool { return len(m) == 1 && m[0].Equal(graph.D(2).Mul(s.Batch)) }, keyRowShape},
	{MaskKeyPadding, func(m graph.Shape, s *draft) bool { return len(m) == 2 && m[1].Equal(s.KVLen) },
		func(m graph.Shape, s *draft) graph.Shape { return graph.Shape{m[0], graph.D(1), graph.D(1), m[1]} }},
	{MaskQueryKey, func(m graph.Shape, s *draft) bool { return len(m) == 3 && m[1].Equal(s.QLen) && m[2].Equal(s.KVLen) },
		func(m graph.Shape, s *draft) graph.Shape { return graph.Shape{m[0], graph.D(1), m[1], m[2]} }},
}

func keyRowShape(m graph.Shape, s *draft) graph.Shape {
	return graph.Shape{s.Batch, graph.D(1), graph.D(1), s.KVLen}
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
func liftMSAttention(g *graph.Graph, n *graph.Node) (*draft, *Reject) {
	at := n
	x, w, bias, mask := n.Input(0), n.Input(1), n.Input(2), n.Input(3)
	if x == nil || w == nil {
		return nil, reject(CodeShape, at, "Attention without input or weights")
	}
	for _, r := range msAttentionRefusals {
		if (r.attr != "" && n.AttrInt(r.attr, 0) != 0) || (r.input >= 0 && n.Input(r.input) != nil) {
			return nil, reject(CodeUnsupported, at, "%s", r.why)
		}
	}
	if x.Type.Rank() != 3 || w.Type.Rank() != 2 {
		return nil, reject(CodeShape, x, "input %q is not (B, S, D_in) or weights %q not (D_in, ·)", x.Name, w.Name)
	}
	h := n.AttrInt("num_heads", 0)
	if h <= 0 {
		return nil, reject(CodeUnsupported, at, "Attention without num_heads")
	}
	sizes, rj := packedSizes(n, w)
	if rj != nil {
		return nil, rj
	}
	xs := x.Type.Shape
	part := func(name string, size int64) *graph.Value {
		return &graph.Value{Name: n.Label() + "/" + name, Kind: graph.KindNode, Type: graph.TensorOf(x.Type.DType, graph.Shape{xs[0], xs[1], graph.D(size)})}
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
			return nil, reject(CodeShape, past, "past %q is not (2, B, H, P, D) for %s heads of %s", past.Name, s.Heads, s.HeadDim)
		}
		kv := graph.TensorOf(past.Type.DType, ps[1:])
		s.PastK = &graph.Value{Name: n.Label() + "/past_key", Kind: graph.KindNode, Type: kv}
		s.PastV = &graph.Value{Name: n.Label() + "/past_value", Kind: graph.KindNode, Type: kv}
		s.KVLen = ps[3].Add(s.KVLen)
	}
	// present is K and V (after the cache), stacked: the rewrite computes
	// both anyway.
	s.WantPresent, s.StackedPresent = usedOutput(g, n, 1), true
	if rj := liftScale(s, n); rj != nil {
		return nil, rj
	}
	if ab := n.Input(5); ab != nil {
		if rj := liftMask(s, ab, "attention_bias"); rj != nil {
			return nil, rj
		}
		if s.Mask() == masks.Bool {
			return nil, reject(CodeMask, ab, "attention_bias %q is %s, not float", ab.Name, ab.Type.DType)
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
	s.Packed = &PackedQKV{X: x, W: w, Bias: bias, Sizes: sizes, Past: past}
	if keep != nil {
		s.Packed.MaskIndex, s.Packed.MaskForm = mask, keep.form
	}
	s.Variant = liftVariant(s)
	return s, nil
}

// packedSizes are the hidden sizes of Q, K and V in the weights' columns.
func packedSizes(n *graph.Node, w *graph.Value) ([3]int64, *Reject) {
	sz, at, err := schema.PackedSizes(n, w)
	if err != nil {
		return sz, reject(CodeShape, at, "%s", err.Error())
	}
	return sz, nil
}

// liftMaskIndex adds mask_index as an additive term: ONNX Runtime adds
// mask_filter_value (-10000 by default, finite) to the scores of dropped
// keys, so a row with every key dropped is a softmax over all of them, not
// zeros. The term is Where(keep, 0, mask_filter_value), read broadcast.
func liftMaskIndex(s *draft, n *graph.Node, m *graph.Value, opset int64) (*maskIndexRule, *Reject) {
	if m.Type.DType != graph.Int32 || !m.Type.Ranked {
		return nil, reject(CodeMask, m, "mask_index %q is %s of unknown rank; ONNX Runtime takes int32", m.Name, m.Type)
	}
	if s.Causal {
		// ONNX Runtime adds mask_filter_value for padding and again for
		// the future, so a query whose past keys are all padding attends
		// to future keys; the fused ops' causal flag drops them.
		return nil, reject(CodeCausal, n, "causal (unidirectional or a triangular attention_bias) with mask_index: ONNX Runtime adds a finite mask_filter_value for both, so a row whose earlier keys are all padding attends to later keys, which the fused ops' causal flag drops")
	}
	sh := m.Type.Shape
	if len(sh) == 4 {
		return nil, reject(CodeMask, m, "4-D mask_index %q (Megatron's (B, 1, max, max)): ONNX Runtime's CPU kernel does not run it", m.Name)
	}
	for i := range maskIndexRules {
		r := &maskIndexRules[i]
		if !r.match(sh, s) {
			continue
		}
		if r.form == MaskKeyLengths || r.form == MaskKeySpans {
			if opset < 11 {
				return nil, reject(CodeMask, m, "1-D mask_index at opset %d: the key positions need Range (opset 11)", opset)
			}
		}
		fill := float64(n.AttrFloat("mask_filter_value", -10000))
		keep := &graph.Value{Name: n.Label() + "/mask_index_keep", Kind: graph.KindNode, Type: graph.TensorOf(graph.Bool, r.keepShape(sh, s))}
		t := masks.Term{Kind: masks.Additive, Value: keep, Fill: &fill, Form: masks.FormInput, Placeholder: true}
		s.Masks = append(s.Masks, t)
		s.maskForm = s.Masks[0].Form
		return r, nil
	}
	return nil, reject(CodeMask, m, "mask_index %q of shape %s is none of (B), (2B), (B, T), (B, S, T) for B %s, S = T %s", m.Name, sh, s.Batch, s.QLen)
}
