package passes

import (
	"github.com/attnopt/attnopt/graph"
)

// attnoptTarget rewrites into attnopt.FlashAttention (DESIGN.md §4), run by
// the kernels in kernels/ through the ONNX Runtime custom-op library.
type attnoptTarget struct{}

func init() { registerTarget(attnoptTarget{}) }

func (attnoptTarget) Name() string                    { return "attnopt" }
func (attnoptTarget) Op() string                      { return "attnopt.FlashAttention" }
func (attnoptTarget) Import() graph.Opset             { return graph.Opset{Domain: "attnopt", Version: 1} }
func (attnoptTarget) CheckModel(m *graph.Model) error { return nil }
func (attnoptTarget) Materialises(s *Site) string     { return "" }
func (attnoptTarget) Owns(n *graph.Node) bool         { return n.Domain == "attnopt" }

func (attnoptTarget) CheckSite(s *Site) error {
	switch s.DType {
	case graph.Float32, graph.Float16, graph.BFloat16:
		return nil
	}
	return &Reject{At: s.Q.Name, Reason: "FlashAttention takes float32, float16 or bfloat16, not " + s.DType.String()}
}

func (attnoptTarget) Build(e *emitter, s *Site) (*graph.Value, error) {
	q, k, v := scaledQ(e, s), naturalK(e, s), naturalV(e, s)
	if s.Rank == 2 {
		q, k, v = e.unsqueeze(q, 0), e.unsqueeze(k, 0), e.unsqueeze(v, 0)
	}
	mask, err := maskInput(e, s, scoreDType(s), true)
	if err != nil {
		return nil, err
	}
	ins := []*graph.Value{q, k, v}
	if mask = liftMaskRank(e, s, mask); mask != nil {
		ins = append(ins, mask)
	}
	causal := int64(0)
	if s.Causal {
		causal = 1
	}
	out := e.op("FlashAttention", "attnopt", ins,
		graph.FloatAttr("scale", float32(s.Scale)), graph.IntAttr("causal", causal))
	if s.Rank == 2 {
		out = e.squeeze(out, 0)
	}
	return restoreOutput(e, s, out), nil
}

func init() {
	// FlashAttention: output (…, Nq, Dv) from Q (…, Nq, Dqk) and V (…, Nk, Dv).
	graph.RegisterInfer("attnopt", "FlashAttention", inferFlash)
	graph.RegisterInfer("attnopt", "WindowAttention", inferFlash)
}

func inferFlash(g *graph.Graph, n *graph.Node) {
	q, v := n.Input(0), n.Input(2)
	if q == nil || v == nil || !q.Type.Ranked || !v.Type.Ranked || len(q.Type.Shape) < 2 {
		return
	}
	out := append(graph.Shape(nil), q.Type.Shape...)
	out[len(out)-1] = v.Type.Shape[len(v.Type.Shape)-1]
	n.Output(0).SetType(graph.TensorOf(q.Type.DType, out))
}

func (attnoptTarget) Attend(e *emitter, s *Site, q, k, v *graph.Value) *graph.Value {
	return e.op("FlashAttention", "attnopt", []*graph.Value{q, k, v},
		graph.FloatAttr("scale", float32(s.Scale)), graph.IntAttr("causal", 0))
}
