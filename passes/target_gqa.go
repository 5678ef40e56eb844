package passes

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// gqaTarget rewrites into com.microsoft.GroupQueryAttention, ONNX Runtime's
// decoder attention: grouped key/value heads without repeating them, always
// causal. It takes causal, unmasked sites whose queries and keys are the
// same tokens (a prompt without cache), with equal Q/K and V head sizes.
type gqaTarget struct{}

func init() { registerTarget(gqaTarget{}) }

func (gqaTarget) Name() string                    { return "gqa" }
func (gqaTarget) Op() string                      { return "com.microsoft.GroupQueryAttention" }
func (gqaTarget) Import() graph.Opset             { return graph.Opset{Domain: "com.microsoft", Version: 1} }
func (gqaTarget) CheckModel(m *graph.Model) error { return nil }
func (gqaTarget) Materialises(o *SDPA) string     { return "" }
func (gqaTarget) OnCUDA(o *SDPA) CUDAPath         { return gqaOnCUDA(cudaCaseOf(o)) }
func (gqaTarget) Owns(n *graph.Node) bool {
	return n.Domain == "com.microsoft" && n.OpType == "GroupQueryAttention"
}

func (gqaTarget) Accept(o *SDPA) error {
	at := o.Node.Label()
	switch {
	case o.Window > 0:
		return &Reject{At: at, Reason: fmt.Sprintf("a sliding window of %d keys: GroupQueryAttention's local_window_size is not lowered (use --target attnopt)", o.Window)}
	case !o.Causal || o.Mask != nil:
		return &Reject{At: at, Reason: "GroupQueryAttention is causal-only and takes no mask; this site is not a plain causal one (use --target attnopt)"}
	case !o.QLen().Equal(o.KVLen()):
		return &Reject{At: at, Reason: fmt.Sprintf("q_len %s and kv_len %s: only the no-cache prompt form is lowered (use --target attnopt)", o.QLen(), o.KVLen())}
	case o.Rank() != 4:
		return &Reject{At: at, Reason: "GroupQueryAttention needs the heads: a rank-4 site"}
	case !o.HeadDim().Equal(o.VHeadDim()):
		return &Reject{At: at, Reason: "GroupQueryAttention needs equal Q/K and V head sizes"}
	case o.DType() != graph.Float32 && o.DType() != graph.Float16:
		return &Reject{At: o.Q.Name, Reason: "GroupQueryAttention takes float32 or float16, not " + o.DType().String()}
	}
	_, err := o.kvGroup()
	return err
}

// Lower: K and V stay at their Hkv heads (the canonical op never repeats
// them); GroupQueryAttention groups them itself.
func (gqaTarget) Lower(e *emitter, o *SDPA) (*graph.Value, error) {
	hq, _ := o.Heads().Value()
	hkv, _ := o.KVHeads().Value()
	q3, k3, v3 := to3D(e, o.Q), to3D(e, o.K), to3D(e, o.V)
	// Every batch row holds all S tokens: seqlens_k = S-1 per row and
	// total_sequence_length = S, both int32.
	toI32 := func(x *graph.Value) *graph.Value {
		return e.op("Cast", "", []*graph.Value{x}, graph.IntAttr("to", int64(graph.Int32)))
	}
	n := e.shapeSlice(q3, 1, 2)
	last := e.op("Sub", "", []*graph.Value{n, e.i64(1)})
	seqlens := toI32(e.op("Expand", "", []*graph.Value{last, e.shapeSlice(q3, 0, 1)}))
	total := toI32(e.op("Reshape", "", []*graph.Value{n, e.i64()}))
	out := e.g.NewValue(e.prefix+"/GroupQueryAttention_out", graph.Type{})
	pk := e.g.NewValue(e.prefix+"/present_key", graph.Type{})
	pv := e.g.NewValue(e.prefix+"/present_value", graph.Type{})
	node := e.g.AddNode("GroupQueryAttention", "com.microsoft", e.prefix+"/GroupQueryAttention",
		[]*graph.Value{q3, k3, v3, nil, nil, seqlens, total}, []*graph.Value{out, pk, pv},
		graph.IntAttr("num_heads", hq), graph.IntAttr("kv_num_heads", hkv), graph.FloatAttr("scale", float32(o.Scale)))
	graph.InferNode(e.g, node)
	return e.transpose(e.reshape(out, 0, 0, hq, -1), 0, 2, 1, 3), nil
}

func init() {
	// GroupQueryAttention: output like query; present K/V (B, Hkv, S, D).
	fusedSchemas["com.microsoft.GroupQueryAttention"] = checkPacked("num_heads", "kv_num_heads", -1)
	graph.RegisterInfer("com.microsoft", "GroupQueryAttention", func(g *graph.Graph, n *graph.Node) {
		if q := n.Input(0); q != nil && q.Type.Rank() == 3 {
			n.Output(0).SetType(q.Type)
		}
	})
}
