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

// gqaTarget rewrites into com.microsoft.GroupQueryAttention, ONNX Runtime's
// decoder attention: grouped key/value heads without repeating them, always
// causal. It takes causal, unmasked sites whose queries and keys are the
// same tokens (a prompt without cache), with equal Q/K and V head sizes.
type gqaTarget struct{}

func init() { registerTarget(gqaTarget{}) }

func (gqaTarget) Name() string { return "gqa" }
func (gqaTarget) Op() string   { return "com.microsoft.GroupQueryAttention" }
func (gqaTarget) Summary() string {
	return "stock ONNX Runtime's decoder attention; causal sites without mask or cache"
}
func (gqaTarget) WindowOp() string                { return "" }
func (gqaTarget) Import() graph.Opset             { return graph.Opset{Domain: "com.microsoft", Version: 1} }
func (gqaTarget) CheckModel(m *graph.Model) error { return nil }

// Materialises: the newest ONNX Runtime's CPU GroupQueryAttention does not
// hold a prompt's scores (peak RSS of the one node, S 4096, 8 heads of 64:
// 161 MB in 1.32.0, 96 MB without it); 1.24.3's does (694 MB), which
// docs/cli.md says beside the target.
func (gqaTarget) Materialises(o *canonical.SDPA) string { return "" }
func (gqaTarget) OnCUDA(o *canonical.SDPA) CUDAPath     { return gqaOnCUDA(cudaCaseOf(o)) }
func (gqaTarget) Owns(n *graph.Node) bool {
	return n.Domain == "com.microsoft" && n.OpType == "GroupQueryAttention"
}

// Lowers: scale, causal and softcap. Accept refuses a window and a mask; a
// causal prompt's rows all see a key, so row attributes are never set
// here, and one that were would be refused rather than dropped.
func (gqaTarget) Lowers() []string {
	return []string{opdef.AttrScale, opdef.AttrCausal, opdef.AttrSoftcap}
}

func (gqaTarget) Accept(o *canonical.SDPA) error {
	if err := refuseWindowed(gqaTarget{}, o); err != nil {
		return err
	}
	switch {
	case o.Attrs.SlidingWindow > 0:
		return match.Rejectf(match.CodeTarget, o.Node, "%s", fmt.Sprintf("a sliding window of %d keys: GroupQueryAttention's local_window_size is not lowered (use --target attnopt)", o.Attrs.SlidingWindow))
	case !o.Attrs.Causal || o.Mask != nil:
		return match.Rejectf(match.CodeTarget, o.Node, "%s", "GroupQueryAttention is causal-only and takes no mask; this site is not a plain causal one (use --target attnopt)")
	case !o.QLen().Equal(o.KVLen()):
		return match.Rejectf(match.CodeTarget, o.Node, "%s", fmt.Sprintf("q_len %s and kv_len %s: only the no-cache prompt form is lowered (use --target attnopt)", o.QLen(), o.KVLen()))
	case o.Rank() != 4:
		return match.Rejectf(match.CodeTarget, o.Node, "%s", "GroupQueryAttention needs the heads: a rank-4 site")
	case !o.HeadDim().Equal(o.VHeadDim()):
		return match.Rejectf(match.CodeTarget, o.Node, "%s", "GroupQueryAttention needs equal Q/K and V head sizes")
	case o.DType() != graph.Float32 && o.DType() != graph.Float16:
		return match.Rejectf(match.CodeTarget, o.Q, "%s", "GroupQueryAttention takes float32 or float16, not "+o.DType().String())
	}
	if _, err := o.KVGroup(); err != nil {
		r := match.Rejectf(match.CodeTarget, o.K, "%s", err.Error())
		r.Err = err
		return r
	}
	return nil
}

// Lower: K and V stay at their Hkv heads (the canonical op never repeats
// them); GroupQueryAttention groups them itself.
func (gqaTarget) Lower(e *emit.Emitter, o *canonical.SDPA) (*graph.Value, error) {
	hq, _ := o.Heads().Value()
	hkv, _ := o.KVHeads().Value()
	q3, k3, v3 := to3D(e, o.Q), to3D(e, o.K), to3D(e, o.V)
	// Every batch row holds all S tokens: seqlens_k = S-1 per row and
	// total_sequence_length = S, both int32.
	toI32 := func(x *graph.Value) *graph.Value {
		return e.Op("Cast", "", []*graph.Value{x}, graph.IntAttr("to", int64(graph.Int32)))
	}
	n := e.ShapeSlice(q3, 1, 2)
	last := e.Op("Sub", "", []*graph.Value{n, e.I64(1)})
	seqlens := toI32(e.Op("Expand", "", []*graph.Value{last, e.ShapeSlice(q3, 0, 1)}))
	total := toI32(e.Op("Reshape", "", []*graph.Value{n, e.I64()}))
	out := e.G.NewValue(e.Prefix+"/GroupQueryAttention_out", graph.Type{})
	pk := e.G.NewValue(e.Prefix+"/present_key", graph.Type{})
	pv := e.G.NewValue(e.Prefix+"/present_value", graph.Type{})
	node := e.G.AddNode("GroupQueryAttention", "com.microsoft", e.Prefix+"/GroupQueryAttention",
		[]*graph.Value{q3, k3, v3, nil, nil, seqlens, total}, []*graph.Value{out, pk, pv},
		append([]*graph.Attr{graph.IntAttr("num_heads", hq), graph.IntAttr("kv_num_heads", hkv), graph.FloatAttr("scale", o.Attrs.Scale)},
			softcapAttrs(o)...)...)
	graph.InferNode(e.G, node)
	return e.Transpose(e.Reshape(out, 0, 0, hq, -1), 0, 2, 1, 3), nil
}

func init() {
	schema.Register("com.microsoft.GroupQueryAttention", schema.Packed("num_heads", "kv_num_heads", -1))
}
