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
func (gqaTarget) Materialises(s *Site) string     { return "" }
func (gqaTarget) Owns(n *graph.Node) bool {
	return n.Domain == "com.microsoft" && n.OpType == "GroupQueryAttention"
}

func (gqaTarget) CheckSite(s *Site) error {
	at := s.Softmax.Label()
	switch {
	case !s.Causal || len(s.Masks) > 0:
		return &Reject{At: at, Reason: "GroupQueryAttention is causal-only and takes no mask; this site is not a plain causal one (use --target attnopt)"}
	case !s.QLen.Equal(s.KVLen) || s.PastK != nil:
		return &Reject{At: at, Reason: fmt.Sprintf("q_len %s and kv_len %s: only the no-cache prompt form is lowered (use --target attnopt)", s.QLen, s.KVLen)}
	case s.Rank != 4:
		return &Reject{At: at, Reason: "GroupQueryAttention needs the heads: a rank-4 site"}
	case !s.HeadDim.Equal(s.VHeadDim):
		return &Reject{At: at, Reason: "GroupQueryAttention needs equal Q/K and V head sizes"}
	case s.DType != graph.Float32 && s.DType != graph.Float16:
		return &Reject{At: s.Q.Name, Reason: "GroupQueryAttention takes float32 or float16, not " + s.DType.String()}
	}
	_, err := kvGroup(s)
	return err
}

func (gqaTarget) Build(e *emitter, s *Site) (*graph.Value, error) {
	// A site whose head repeat was looked through (Site.Repeated) keeps K
	// and V at their Hkv heads: GroupQueryAttention groups them itself.
	q, k, v := scaledQ(e, s), naturalK(e, s), naturalV(e, s)
	hq, _ := s.Heads.Value()
	hkv, _ := s.KVHeads.Value()
	q3, k3, v3 := to3D(e, q), to3D(e, k), to3D(e, v)
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
		graph.IntAttr("num_heads", hq), graph.IntAttr("kv_num_heads", hkv), graph.FloatAttr("scale", float32(s.Scale)))
	graph.InferNode(e.g, node)
	res := e.transpose(e.reshape(out, 0, 0, hq, -1), 0, 2, 1, 3)
	return restoreOutput(e, s, res), nil
}

func (gqaTarget) Attend(e *emitter, s *Site, q, k, v *graph.Value) *graph.Value {
	// Pooling plans only serve unmasked, non-causal sites, which this
	// target refuses in CheckSite; the attnopt op keeps Attend total.
	return attnoptTarget{}.Attend(e, s, q, k, v)
}

func init() {
	// GroupQueryAttention: output like query; present K/V (B, Hkv, S, D).
	graph.RegisterInfer("com.microsoft", "GroupQueryAttention", func(g *graph.Graph, n *graph.Node) {
		if q := n.Input(0); q != nil && q.Type.Rank() == 3 {
			n.Output(0).SetType(q.Type)
		}
	})
}
