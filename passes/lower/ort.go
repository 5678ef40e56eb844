package lower

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/schema"
)

// ortTarget rewrites into com.microsoft.MultiHeadAttention, which stock ONNX
// Runtime runs without an N² buffer. MHA takes 3-D (B, S, H·D) tensors, so
// the rewrite adds the Transpose/Reshape pairs that cleanup then cancels
// against the model's own.
type ortTarget struct{}

func init() { registerTarget(ortTarget{}) }

func (ortTarget) Name() string                    { return "ort" }
func (ortTarget) Op() string                      { return "com.microsoft.MultiHeadAttention" }
func (ortTarget) Summary() string                 { return "stock ONNX Runtime, no custom-op library" }
func (ortTarget) WindowOp() string                { return "" }
func (ortTarget) Import() graph.Opset             { return graph.Opset{Domain: "com.microsoft", Version: 1} }
func (ortTarget) CheckModel(m *graph.Model) error { return nil }
func (ortTarget) Owns(n *graph.Node) bool {
	return n.Domain == "com.microsoft" && n.OpType == "MultiHeadAttention"
}

// Lowers: scale, unidirectional (or a band plane) and the rows; softcap is
// refused by Accept.
func (ortTarget) Lowers() []string {
	return append([]string{opdef.AttrScale, opdef.AttrCausal, opdef.AttrSlidingWindow}, rowAttrs...)
}

// Materialises: ONNX Runtime's CPU MultiHeadAttention takes its
// memory-efficient path only without attention_bias, key padding mask or
// unidirectional. Measured (peak RSS of the one node, S 4096, 8 heads of
// 64, ORT 1.24.3 and 1.32.0): 137-144 MB unmasked, 1.28-1.29 GB with
// unidirectional, which is 512 MiB of scores held twice.
func (ortTarget) Materialises(o *canonical.SDPA) string {
	switch {
	case o.Mask != nil || o.Attrs.SlidingWindow > 0:
		return "ONNX Runtime's CPU MultiHeadAttention materialises the scores when it has an attention_bias (this site is masked); --target attnopt (attnopt.FlashAttention) does not"
	case o.Attrs.Causal && (gqaTarget{}).Accept(o) == nil:
		// A plain causal prompt GroupQueryAttention takes: stock ORT's own
		// op for it (1.32's CPU kernel holds no scores; the Llama layer of
		// bench/README.md runs 0.93-0.98 of the original there, 1.01-1.04
		// through MHA). Not chosen for the user: GQA has no float32 CUDA
		// kernel (cuda.go), which MHA has.
		return "ONNX Runtime's CPU MultiHeadAttention materialises the scores of a causal (unidirectional) site; --target attnopt (attnopt.FlashAttention) does not, nor does --target gqa (stock ONNX Runtime's GroupQueryAttention) from ONNX Runtime 1.32"
	case o.Attrs.Causal:
		return "ONNX Runtime's CPU MultiHeadAttention materialises the scores of a causal (unidirectional) site; --target attnopt (attnopt.FlashAttention) does not"
	}
	return ""
}

func (ortTarget) OnCUDA(o *canonical.SDPA) CUDAPath { return mhaOnCUDA(cudaCaseOf(o)) }

func (ortTarget) Accept(o *canonical.SDPA) error {
	if err := refuseWindowed(ortTarget{}, o); err != nil {
		return err
	}
	if !o.CausalAligned() {
		return match.Rejectf(match.CodeTarget, o.Node, "%s", fmt.Sprintf("causal with q_len %s and kv_len %s: MultiHeadAttention's unidirectional alignment is not verified for unequal lengths (use --target attnopt)", o.QLen(), o.KVLen()))
	}
	if o.Attrs.Softcap > 0 {
		return match.Rejectf(match.CodeTarget, o.Node, "softcap %g: MultiHeadAttention has no softcap attribute (use --target attnopt or --target gqa)", o.Attrs.Softcap)
	}
	if o.DType() != graph.Float32 && o.DType() != graph.Float16 {
		return match.Rejectf(match.CodeTarget, o.Q, "%s", "MultiHeadAttention takes float32 or float16, not "+o.DType().String())
	}
	if o.Rank() == 4 {
		if _, err := staticDim(o.Heads(), "the head count"); err != nil {
			return match.Rejectf(match.CodeTarget, o.Q, "%s", err.Error())
		}
		if _, err := o.KVGroup(); err != nil {
			return match.Rejectf(match.CodeTarget, o.K, "%s", err.Error())
		}
	}
	return nil
}

// to3D turns (B, H, N, D) into (B, N, H·D).
func to3D(e *emit.Emitter, v *graph.Value) *graph.Value {
	return e.Reshape(e.Transpose(v, 0, 2, 1, 3), 0, 0, -1)
}

// Lower: MultiHeadAttention takes (B, S, H·D) operands, K/V repeated to
// every query head, and an additive attention_bias of (B|1, H|1, S, L).
func (ortTarget) Lower(e *emit.Emitter, o *canonical.SDPA) (*graph.Value, error) {
	q, k, v := o.Q, o.K, o.V
	heads := int64(1)
	if o.Rank() == 4 {
		heads, _ = o.Heads().Value()
		g, _ := o.KVGroup()
		k, v = repeatHeads(e, k, g), repeatHeads(e, v, g)
		q, k, v = to3D(e, q), to3D(e, k), to3D(e, v)
	}
	ins := []*graph.Value{q, k, v}
	if mask := rowsBias(e, o, o.DType(), false); mask != nil {
		bias := biasOf(e, mask, o.DType())
		if r := bias.Type.Rank(); r < 4 {
			lead := make([]int64, 4-r)
			for i := range lead {
				lead[i] = int64(i)
			}
			bias = e.Unsqueeze(bias, lead...)
		}
		ins = append(ins, nil, nil, fullQueryKeyAxes(e, bias, q, k))
	}
	attrs := []*graph.Attr{graph.IntAttr("num_heads", heads), graph.FloatAttr("scale", o.Attrs.Scale)}
	if o.Attrs.Causal && !causalAsBias(o) {
		attrs = append(attrs, graph.IntAttr("unidirectional", 1))
	}
	out := e.Op("MultiHeadAttention", "com.microsoft", ins, attrs...)
	if o.Rank() == 4 {
		out = e.Transpose(e.Reshape(out, 0, 0, heads, -1), 0, 2, 1, 3)
	}
	// MultiHeadAttention gives NaN for a row whose bias is all −inf, as the
	// source does without a guard; literal rows with finite fills it computes
	// itself.
	if o.Rows().Literal() || !o.Rows().Guarded {
		return out, nil
	}
	return guardRows(e, o, out, 0), nil
}

func init() {
	schema.Register("com.microsoft.MultiHeadAttention", schema.Packed("num_heads", "num_heads", 5))
}

// fullQueryKeyAxes expands attention_bias over the query and key axes, which
// MultiHeadAttention does not broadcast (it does broadcast batch and heads,
// which stay 1 here): a (B, 1, 1, L) padding bias becomes (B, 1, S, L).
func fullQueryKeyAxes(e *emit.Emitter, bias, q3, k3 *graph.Value) *graph.Value {
	bs, qs, ks := bias.Type.Shape, q3.Type.Shape, k3.Type.Shape
	if len(bs) == 4 && len(qs) == 3 && len(ks) == 3 && bs[2].Equal(qs[1]) && bs[3].Equal(ks[1]) {
		return bias
	}
	lead := e.ShapeSlice(bias, 0, 2)
	s := e.ShapeSlice(q3, 1, 2)
	l := e.ShapeSlice(k3, 1, 2)
	target := e.Op("Concat", "", []*graph.Value{lead, s, l}, graph.IntAttr("axis", 0))
	return e.Op("Expand", "", []*graph.Value{bias, target})
}

// repeatHeads gives each of g query heads its key/value head: (B, Hkv, N, D)
// → (B, Hkv·g, N, D). MultiHeadAttention has no grouped-query form; the copy
// costs g× the K/V memory, never the scores.
func repeatHeads(e *emit.Emitter, x *graph.Value, g int64) *graph.Value {
	if g == 1 {
		return x
	}
	u := e.Unsqueeze(x, 2)
	if dims, ok := x.Type.Shape.Ints(); ok && len(dims) == 4 {
		full := e.Op("Expand", "", []*graph.Value{u, e.I64(dims[0], dims[1], g, dims[2], dims[3])})
		return e.Reshape(full, dims[0], dims[1]*g, dims[2], dims[3])
	}
	shape := e.Op("Concat", "", []*graph.Value{e.ShapeSlice(x, 0, 2), e.I64(g), e.ShapeSlice(x, 2, 4)}, graph.IntAttr("axis", 0))
	full := e.Op("Expand", "", []*graph.Value{u, shape})
	merged := e.Op("Concat", "", []*graph.Value{e.ShapeSlice(x, 0, 1), e.I64(-1), e.ShapeSlice(x, 2, 4)}, graph.IntAttr("axis", 0))
	return e.Op("Reshape", "", []*graph.Value{full, merged})
}
