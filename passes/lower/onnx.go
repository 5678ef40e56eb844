package lower

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// onnxTarget rewrites into the standard Attention op (ai.onnx, opset 23).
// Portable, but ONNX Runtime 1.24's CPU kernel for it still materialises the
// scores.
type onnxTarget struct{}

func init() { registerTarget(onnxTarget{}) }

func (onnxTarget) Name() string            { return "onnx" }
func (onnxTarget) Op() string              { return "ai.onnx.Attention" }
func (onnxTarget) Summary() string         { return "the standard op; models of opset 23 and later" }
func (onnxTarget) WindowOp() string        { return "" }
func (onnxTarget) Import() graph.Opset     { return graph.Opset{Domain: "", Version: 23} }
func (onnxTarget) Owns(n *graph.Node) bool { return n.Is("Attention") }

// Lowers: scale, is_causal (or a band plane), softcap and the rows.
func (onnxTarget) Lowers() []string {
	return append([]string{opdef.AttrScale, opdef.AttrCausal, opdef.AttrSlidingWindow, opdef.AttrSoftcap}, rowAttrs...)
}

// Materialises: ONNX Runtime 1.24's CPU kernel for Attention always
// materialises the scores.
func (onnxTarget) Materialises(o *canonical.SDPA) string {
	return "ONNX Runtime 1.24's CPU kernel for Attention materialises the scores; --target attnopt (attnopt.FlashAttention) does not"
}

func (onnxTarget) OnCUDA(o *canonical.SDPA) CUDAPath { return attentionOnCUDA(cudaCaseOf(o)) }

func (onnxTarget) CheckModel(m *graph.Model) error {
	if v := m.Opset(""); v < 23 {
		return &ModelError{Msg: fmt.Sprintf("--target onnx needs opset 23 or later for Attention; this model imports opset %d (use --target attnopt or --target ort)", v)}
	}
	return nil
}

func (onnxTarget) Accept(o *canonical.SDPA) error {
	if err := refuseWindowed(onnxTarget{}, o); err != nil {
		return err
	}
	if !o.CausalAligned() {
		// Without a KV cache, Attention's is_causal is top-left aligned;
		// the site's mask is bottom-right.
		return match.Rejectf(match.CodeTarget, o.Node, "%s", fmt.Sprintf("causal with q_len %s and kv_len %s: ONNX Attention aligns is_causal top-left without a KV cache (use --target attnopt)", o.QLen(), o.KVLen()))
	}
	if o.Attrs.Softcap > 0 && (o.Mask != nil || o.Attrs.Causal) {
		// The spec caps before the mask, as the site does; ONNX Runtime
		// 1.24's CPU kernel caps after it, so a dropped key scores −softcap
		// and is attended (measured: passes/softcap_test.go).
		return match.Rejectf(match.CodeTarget, o.Node, "softcap %g with a mask or causal: ONNX Runtime 1.24's Attention applies softcap after the mask, so masked keys would be attended (use --target attnopt)", o.Attrs.Softcap)
	}
	switch o.DType() {
	case graph.Float32, graph.Float16, graph.BFloat16, graph.Float64:
		return nil
	}
	return match.Rejectf(match.CodeTarget, o.Q, "%s", "Attention does not take "+o.DType().String())
}

// Lower: Attention is rank 4 (heads folded into the batch get a head axis
// of 1) and reads a bool or additive attn_mask in Q's type.
func (onnxTarget) Lower(e *emit.Emitter, o *canonical.SDPA) (*graph.Value, error) {
	q, k, v := o.Q, o.K, o.V
	folded := o.Rank() == 3
	if folded {
		q, k, v = e.Unsqueeze(q, 1), e.Unsqueeze(k, 1), e.Unsqueeze(v, 1)
	}
	ins := []*graph.Value{q, k, v}
	if mask := rowsBias(e, o, o.DType(), true); mask != nil {
		if o.Rows().FiniteFills() {
			mask = clampLowest(e, mask, o.DType())
		}
		if mask.Type.DType != graph.Bool && mask.Type.DType != o.DType() {
			mask = e.Op("Cast", "", []*graph.Value{mask}, graph.IntAttr("to", int64(o.DType())))
		}
		ins = append(ins, fullQueryAxis(e, mask, q))
	}
	attrs := []*graph.Attr{graph.FloatAttr("scale", o.Attrs.Scale)}
	attrs = append(attrs, softcapAttrs(o)...)
	if o.Attrs.Causal && !causalAsBias(o) {
		attrs = append(attrs, graph.IntAttr("is_causal", 1))
	}
	out := e.Op("Attention", "", ins, attrs...)
	if folded {
		out = e.Squeeze(out, 1)
	}
	// ONNX Runtime's Attention gives zeros (1.31+), NaN or the mean of V
	// (1.24, bool masks) for a row that sees no key: the guard states the
	// source's value, NaN without a source guard, zeros with one.
	switch {
	case !o.Rows().Literal() && o.Rows().Guarded:
		return guardRows(e, o, out, 0), nil
	case !o.Rows().Literal():
		return out, nil
	case !o.Rows().Finite():
		return guardRows(e, o, out, math.NaN()), nil
	}
	return out, nil
}

// fullQueryAxis expands a mask whose query axis is 1 to Q's length: ONNX
// Runtime 1.24 requires attn_mask's second-to-last dim to equal q_seq even
// though the spec lets it broadcast. Heads and batch stay unexpanded.
func fullQueryAxis(e *emit.Emitter, mask, q4 *graph.Value) *graph.Value {
	ms, qs := mask.Type.Shape, q4.Type.Shape
	r := len(ms)
	if r < 2 || len(qs) != 4 || ms[r-2].Equal(qs[2]) {
		return mask
	}
	lead := e.ShapeSlice(mask, 0, int64(r-2))
	nq := e.ShapeSlice(q4, 2, 3)
	nk := e.ShapeSlice(mask, int64(r-1), int64(r))
	target := e.Op("Concat", "", []*graph.Value{lead, nq, nk}, graph.IntAttr("axis", 0))
	return e.Op("Expand", "", []*graph.Value{mask, target})
}

// clampLowest moves float32's lowest value in an additive mask one step up
// (−3.4028233e38): ONNX Runtime 1.31+ reads exactly finfo.min as "no key"
// and zeros a row of it, where the spec's softmax (and the source graph)
// averages V. Any fill ≤ −1e30 drops the same keys, so nothing else moves.
func clampLowest(e *emit.Emitter, mask *graph.Value, dt graph.DType) *graph.Value {
	if mask.Type.DType != graph.Float32 || dt != graph.Float32 {
		return mask
	}
	return e.Op("Max", "", []*graph.Value{mask, e.Scalar(graph.Float32, -3.4028233e38)})
}
