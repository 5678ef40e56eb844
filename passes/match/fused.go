package match

import (
	"math"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
	"github.com/attnopt/attnopt/passes/schema"
)

// Lifting: an attention op the exporter already fused becomes a site like
// any matched pattern, so every target can re-lower it. ONNX Runtime's CPU
// kernels for ONNX Attention (always) and for MultiHeadAttention with a bias
// or padding mask materialise the B·H·Nq·Nk scores, so they are sites, not
// fused ops. Each rule lifts one op exactly or says why it cannot.

// liftRule lifts one fused op. It returns the site, or a Reject naming why
// the op stays as it is, or neither when the op is memory-efficient in its
// runtime already (no site, nothing to explain).
type liftRule struct {
	domain, op string
	lift       func(g *graph.Graph, n *graph.Node) (*draft, *Reject)
}

var liftRules = []liftRule{
	{"", "Attention", liftONNXAttention},
	{"com.microsoft", "MultiHeadAttention", liftMHA},
	{"com.microsoft", "Attention", liftMSAttention},
}

func liftRuleFor(n *graph.Node) *liftRule {
	d := graph.CanonicalDomain(n.Domain)
	for i := range liftRules {
		if liftRules[i].domain == d && liftRules[i].op == n.OpType {
			return &liftRules[i]
		}
	}
	return nil
}

func opName(n *graph.Node) string { return schema.OpName(n) }

// liftedBase fills what every lifted site shares.
func liftedBase(n *graph.Node, q, k, v *graph.Value) *draft {
	return &draft{Match: Match{Softmax: n, Lifted: n, Nodes: []*graph.Node{n}, Q: q, K: k, V: v, Output: n.Output(0),
		ScoreOp: n.OpType, Rank: 4}}
}

// usedOutput reports whether output i of n exists and is read or is a graph
// output.
func usedOutput(g *graph.Graph, n *graph.Node, i int) bool {
	o := n.Output(i)
	return o != nil && (len(o.Uses()) > 0 || isGraphOutput(g, o))
}

// liftONNXAttention lifts ONNX Attention (opset 23/24): rank 4 (B,H,N,D) or
// rank 3 (B,N,H·D) with q_num_heads/kv_num_heads, bool or additive
// attn_mask, is_causal, scale, and past_key/past_value with present outputs
// (lowered to a Concat on the key axis).
func liftONNXAttention(g *graph.Graph, n *graph.Node) (*draft, *Reject) {
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	if q == nil || k == nil || v == nil {
		return nil, reject(CodeShape, n, "Attention without Q, K or V")
	}
	at := n
	// softcap caps the scaled scores before the mask, as the canonical op.
	sc := float64(n.AttrFloat("softcap", 0))
	if sc < 0 || math.IsInf(sc, 0) || math.IsNaN(sc) {
		return nil, reject(CodeUnsupported, at, "softcap %g: the fused ops take a finite softcap >= 0", sc)
	}
	if usedOutput(g, n, 3) {
		return nil, reject(CodeIntermediate, at, "its qk_matmul_output (mode %d) is read, so the scores must exist", n.AttrInt("qk_matmul_output_mode", 0))
	}
	if n.Input(6) != nil {
		return nil, reject(CodeUnsupported, at, "nonpad_kv_seqlen (per-batch key lengths) is not lifted")
	}
	s := liftedBase(n, q, k, v)
	s.Softcap = sc
	for _, x := range []*graph.Value{q, k, v} {
		if !x.Type.Ranked {
			return nil, reject(CodeShape, x, "rank of %q is unknown", x.Name)
		}
	}
	r := q.Type.Rank()
	if k.Type.Rank() != r || v.Type.Rank() != r || (r != 3 && r != 4) {
		return nil, reject(CodeShape, q, "Q, K, V have ranks %d, %d, %d; Attention takes rank 3 or 4", r, k.Type.Rank(), v.Type.Rank())
	}
	qs, ks, vs := q.Type.Shape, k.Type.Shape, v.Type.Shape
	if r == 4 {
		s.Batch, s.Heads, s.KVHeads, s.QLen, s.KVLen, s.HeadDim, s.VHeadDim = qs[0], qs[1], ks[1], qs[2], ks[2], qs[3], vs[3]
	} else {
		hq, hkv := n.AttrInt("q_num_heads", 0), n.AttrInt("kv_num_heads", 0)
		if hq <= 0 || hkv <= 0 {
			return nil, reject(CodeUnsupported, at, "rank-3 Attention without q_num_heads/kv_num_heads")
		}
		if rj := splitPacked(s, hq, hkv); rj != nil {
			return nil, rj
		}
	}
	s.DType = q.Type.DType
	pk, pv := n.Input(4), n.Input(5)
	if pk == nil && !s.PackedHeads && !usedOutput(g, n, 1) && !usedOutput(g, n, 2) {
		liftUnrepeat(s)
	}
	if hq, ok := s.Heads.Value(); ok {
		if hkv, ok := s.KVHeads.Value(); ok && (hkv == 0 || hq%hkv != 0) {
			return nil, reject(CodeShape, k, "%d query heads are not a multiple of %d key/value heads", hq, hkv)
		}
	}
	if (pk == nil) != (pv == nil) {
		return nil, reject(CodeShape, at, "past_key and past_value must come together")
	}
	if pk != nil {
		if pk.Type.Rank() != 4 || pv.Type.Rank() != 4 {
			return nil, reject(CodeShape, pk, "past_key/past_value of unknown rank or rank other than 4")
		}
		s.PastK, s.PastV = pk, pv
		s.KVLen = pk.Type.Shape[2].Add(s.KVLen)
	}
	// present_key/present_value are the full (B, Hkv, P+L, D) keys and
	// values, which the rewrite computes anyway.
	s.WantPresent = usedOutput(g, n, 1) || usedOutput(g, n, 2)
	if rj := liftScale(s, n); rj != nil {
		return nil, rj
	}
	if m := n.Input(3); m != nil {
		if rj := liftMask(s, m, "attn_mask"); rj != nil {
			return nil, rj
		}
		// ONNX Attention's function body zeroes rows with no admitted key.
		s.ZeroRowGuard = true
	}
	if n.AttrInt("is_causal", 0) != 0 {
		s.Causal = true
		// is_causal is aligned to the cached keys: query i sees keys up to
		// P + i. That is bottom-right (the fused ops' alignment) exactly
		// when the new keys are as many as the queries.
		newKV := ks[r-2]
		if !newKV.Equal(s.QLen) {
			return nil, reject(CodeCausal, at, "is_causal with %s new keys for %s queries: ONNX aligns it to the cache, the fused ops bottom-right", newKV, s.QLen)
		}
	}
	s.Variant = liftVariant(s)
	return s, nil
}

// liftMask records an attention mask input: bool (true = attend) or
// additive, read broadcast against (B, Hq, Nq, Nk). Its key axis must be
// the keys' (ONNX pads a shorter mask with -inf; that form is not lifted).
func liftMask(s *draft, m *graph.Value, what string) *Reject {
	if !m.Type.Ranked || m.Type.Rank() < 1 || m.Type.Rank() > 4 {
		return reject(CodeMask, m, "%s %q has unknown rank or rank over 4", what, m.Name)
	}
	last := m.Type.Shape[m.Type.Rank()-1]
	if !last.Equal(s.KVLen) && !(last.Static() && last.C == 1) {
		return reject(CodeMask, m, "%s %q covers %s keys of %s (a shorter mask is padded; not lifted)", what, m.Name, last, s.KVLen)
	}
	if (m.Type.DType == graph.Bool && posmask.FilledWith(m, func(x float64) bool { return x != 0 })) || isZeroTensor(m) {
		return nil // keeps every key (dynamo folds an absent padding mask to all-true): no mask
	}
	if liftCausal(s, m) {
		return nil
	}
	kind := masks.Additive
	if m.Type.DType == graph.Bool {
		kind = masks.Bool
	}
	s.Masks, s.maskForm = []masks.Term{{Kind: kind, Value: m, Form: masks.FormInput}}, masks.FormInput
	return nil
}

// liftCausal reads a mask input with the matcher's causal rules
// (match_causal_terms.go): dynamo writes a causal SDPA as ONNX Attention
// with a bool attn_mask built from aranges, which becomes the op's causal
// flag (and a sliding window's band) like a matched pattern's, other terms
// staying masks. It reports false, recording nothing, when no term is
// triangular. The site's lengths must be known.
func liftCausal(s *draft, mask *graph.Value) bool {
	m := &matcher{}
	var found bool
	if mask.Type.DType == graph.Bool {
		found = m.peelCausalCond(mask, false, math.Inf(-1), s)
	} else {
		found = m.peelCausalBias(mask, s)
	}
	if found {
		takeCausal(s)
	}
	return found
}

// liftUnrepeat reads K and V at their Hkv heads when the graph repeats them
// to every query head before the op (dynamo's repeat_kv ahead of ONNX
// Attention), as matched sites do (gqa.go). Only without a cache or
// present outputs: those are the repeated tensors.
func liftUnrepeat(s *draft) {
	takeUnrepeated(s, unrepeatedKV(s))
	if s.Repeated == nil {
		return
	}
	if !s.K.Type.Ranked || s.K.Type.Rank() != 4 || !s.V.Type.Ranked || s.V.Type.Rank() != 4 {
		s.K, s.KTransposed, s.V, s.Repeated = s.Repeated.K, s.Repeated.KTransposed, s.Repeated.V, nil
		return
	}
	s.KVHeads = s.K.Type.Shape[1]
}

// liftMHA lifts com.microsoft.MultiHeadAttention with separate 3-D Q, K, V
// and an attention_bias or unidirectional: ONNX Runtime's CPU kernel
// materialises the scores with either (passes/lower/ort.go, Materialises,
// has the measurement). Without bias, padding mask or unidirectional it is
// memory-efficient and stays fused.
func liftMHA(g *graph.Graph, n *graph.Node) (*draft, *Reject) {
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	bias, kpm := n.Input(5), n.Input(4)
	causal := n.AttrInt("unidirectional", 0) != 0
	if bias == nil && kpm == nil && !causal {
		return nil, nil
	}
	at := n
	switch {
	case k == nil || v == nil:
		return nil, reject(CodeUnsupported, at, "packed QKV MultiHeadAttention is not lifted")
	case n.Input(3) != nil:
		return nil, reject(CodeUnsupported, at, "MultiHeadAttention with a projection bias is not lifted")
	case kpm != nil:
		return nil, reject(CodeUnsupported, kpm, "MultiHeadAttention's key_padding_mask is not lifted")
	case n.Input(6) != nil || n.Input(7) != nil:
		return nil, reject(CodeUnsupported, at, "MultiHeadAttention with past_key/past_value is not lifted")
	case usedOutput(g, n, 1) || usedOutput(g, n, 2):
		return nil, reject(CodeIntermediate, at, "MultiHeadAttention's present_key/present_value are read")
	}
	for _, x := range []*graph.Value{q, k, v} {
		if x.Type.Rank() != 3 {
			return nil, reject(CodeShape, x, "MultiHeadAttention input %q is not (B, S, H·D)", x.Name)
		}
	}
	h := n.AttrInt("num_heads", 0)
	if h <= 0 {
		return nil, reject(CodeUnsupported, at, "MultiHeadAttention without num_heads")
	}
	s := liftedBase(n, q, k, v)
	if rj := splitPacked(s, h, h); rj != nil {
		return nil, rj
	}
	s.DType = q.Type.DType
	if rj := liftScale(s, n); rj != nil {
		return nil, rj
	}
	if bias != nil {
		if rj := liftMask(s, bias, "attention_bias"); rj != nil {
			return nil, rj
		}
		if s.Mask() != masks.Additive {
			return nil, reject(CodeMask, bias, "attention_bias %q is %s, not float", bias.Name, bias.Type.DType)
		}
	}
	if causal {
		if !s.QLen.Equal(s.KVLen) {
			return nil, reject(CodeCausal, at, "unidirectional with q_len %s and kv_len %s: alignment not verified", s.QLen, s.KVLen)
		}
		s.Causal = true
	}
	s.Variant = liftVariant(s)
	return s, nil
}

// liftVariant names a lifted site's form, as variantName does for patterns:
// liftedLead, then the form.
func liftVariant(s *draft) string {
	v := liftedLead(s.Lifted)
	if s.PackedHeads {
		v += "/rank3"
	} else {
		v += "/rank4"
	}
	if !s.Heads.Equal(s.KVHeads) {
		v += "/gqa"
	}
	v += formSuffix(s, string(s.Mask()))
	if s.PastK != nil {
		v += "/kv-cache"
	}
	return v
}

// liftedLead is what a lifted site's variant says before its form: the op
// it was lifted from.
func liftedLead(n *graph.Node) string { return "lifted:" + opName(n) }

// LiftedForm is a lifted site's form ("rank3/scale-default/causal"), its
// variant less the op it was lifted from; "" for a site of a pattern.
// Reports show it beside the op (report/format.go).
func LiftedForm(s *Match) string {
	if s.Lifted == nil {
		return ""
	}
	return strings.TrimPrefix(s.Variant, liftedLead(s.Lifted)+"/")
}

// liftFused applies the op's lift rule, if it has one, to an op that passes
// its runtime's checks (passes/schema/runtime.go; the pipeline refuses the model
// otherwise, this keeps FindSites' other callers from lifting it).
func liftFused(g *graph.Graph, n *graph.Node) (*Match, *Reject) {
	r := liftRuleFor(n)
	if r == nil {
		return nil, nil
	}
	if err := schema.CheckRuntimeOp(n); err != nil {
		rj := reject(CodeRuntime, n, "ONNX Runtime refuses it: %v", err)
		rj.Err = err
		return nil, rj
	}
	s, rj := r.lift(g, n)
	if s == nil {
		return nil, rj
	}
	return s.done(), nil
}

// OpName is "domain.Op" with ai.onnx for the default domain.
func OpName(n *graph.Node) string { return schema.OpName(n) }

// LiftedNote says why a lifted op is a site: what its runtime does.
func LiftedNote(op string) string {
	switch op {
	case "ai.onnx.Attention":
		return "ONNX Runtime 1.24's CPU kernel for it materialises the scores"
	case "com.microsoft.Attention":
		return "ONNX Runtime 1.24's CPU kernel for it materialises the scores (and a B·S·T mask when masked or causal)"
	case "com.microsoft.MultiHeadAttention":
		return "ONNX Runtime's CPU kernel materialises the scores when it has an attention_bias or unidirectional"
	}
	return ""
}

// splitPacked reads the sizes of (B, N, H·D) operands split into hq query
// and hkv key/value heads.
func splitPacked(s *draft, hq, hkv int64) *Reject {
	qs, ks, vs := s.Q.Type.Shape, s.K.Type.Shape, s.V.Type.Shape
	var ok1, ok2, ok3 bool
	s.Batch, s.QLen, s.KVLen = qs[0], qs[1], ks[1]
	s.Heads, s.KVHeads = graph.D(hq), graph.D(hkv)
	s.HeadDim, ok1 = qs[2].Div(graph.D(hq))
	kd, ok2 := ks[2].Div(graph.D(hkv))
	s.VHeadDim, ok3 = vs[2].Div(graph.D(hkv))
	if !ok1 || !ok2 || !ok3 || !kd.Equal(s.HeadDim) {
		return reject(CodeShape, s.Q, "hidden sizes %s, %s, %s do not split into %d query and %d key/value heads", qs[2], ks[2], vs[2], hq, hkv)
	}
	s.PackedHeads = true
	return nil
}

// liftScale takes the op's scale attribute, or its default 1/√Dqk where
// ONNX Runtime uses it: no scale, NaN for ONNX Attention (whose 0 it
// refuses, passes/schema/runtime.go), 0 for com.microsoft's ops. A scale the fused ops
// cannot take (negative, infinite, NaN otherwise) is not lifted.
func liftScale(s *draft, n *graph.Node) *Reject {
	a := n.Attr("scale")
	onnxOp := opName(n) == "ai.onnx.Attention"
	switch {
	case a == nil || a.Kind != graph.AttrFloat:
	case math.IsNaN(float64(a.F)) && onnxOp:
	case a.F == 0 && !onnxOp:
	case a.F > 0 && !math.IsInf(float64(a.F), 0):
		s.Scale, s.ScaleForm = float64(a.F), ScaleAttr
		return nil
	default:
		return reject(CodeScale, n, "scale %g: the fused ops take a finite scale > 0", a.F)
	}
	d, ok := s.HeadDim.Value()
	if !ok {
		return reject(CodeScale, s.Q, "default scale 1/√Dqk with head dim %s unknown", s.HeadDim)
	}
	s.Scale, s.ScaleForm = 1/math.Sqrt(float64(d)), ScaleDefault
	return nil
}

func isGraphOutput(g *graph.Graph, v *graph.Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}
