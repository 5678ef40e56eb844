package passes

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
)

// attnoptTarget rewrites into attnopt.FlashAttention (docs/design.md §4), run by
// the kernels in kernels/ through the ONNX Runtime custom-op library.
type attnoptTarget struct{}

func init() { registerTarget(attnoptTarget{}) }

func (attnoptTarget) Name() string                    { return "attnopt" }
func (attnoptTarget) Op() string                      { return "attnopt.FlashAttention" }
func (attnoptTarget) Import() graph.Opset             { return graph.Opset{Domain: "attnopt", Version: 1} }
func (attnoptTarget) CheckModel(m *graph.Model) error { return nil }
func (attnoptTarget) Materialises(o *SDPA) string     { return "" }
func (attnoptTarget) OnCUDA(o *SDPA) CUDAPath {
	return CUDAPath{CUDAAttnopt, "attnopt.FlashAttention's CUDA kernel (libattnopt_ort.so)"}
}
func (attnoptTarget) Owns(n *graph.Node) bool { return n.Domain == "attnopt" }

// Accept refuses what the kernels would refuse at run time (internal/opdef,
// docs/ops.md): Q's type, a static head size outside the kernels' limit,
// and a mask of a type or rank the op does not take. The site is then left
// as it was, with the reason.
func (attnoptTarget) Accept(o *SDPA) error {
	op := opdef.FlashAttention
	if q := op.Input("Q"); !q.Takes(o.DType()) {
		return &Reject{At: o.Q.Name, Reason: "FlashAttention takes " + opdef.TypesText(q.Types) + ", not " + o.DType().String()}
	}
	dqk, ok1 := o.HeadDim().Value()
	dv, ok2 := o.VHeadDim().Value()
	if (ok1 && !opdef.HeadDimOK(dqk)) || (ok2 && !opdef.HeadDimOK(dv)) {
		return &Reject{At: o.Q.Name, Reason: fmt.Sprintf("head sizes Dqk %s, Dv %s: FlashAttention's kernels take %d..%d (use --target ort)",
			o.HeadDim(), o.VHeadDim(), opdef.HeadDimMin, opdef.HeadDimMax)}
	}
	if m := op.Input("mask"); o.Mask != nil && o.Mask.Type.Ranked {
		if dt := o.Mask.Type.DType; dt != graph.Undefined && !m.Takes(dt) {
			return &Reject{At: o.Mask.Name, Reason: "FlashAttention's mask is " + opdef.TypesText(m.Types) + ", not " + dt.String()}
		}
		if r := o.Mask.Type.Rank(); r < m.MinRank || r > m.MaxRank {
			return &Reject{At: o.Mask.Name, Reason: fmt.Sprintf("a mask of rank %d: FlashAttention takes rank %d..%d", r, m.MinRank, m.MaxRank)}
		}
	}
	return nil
}

// Lower: FlashAttention is the canonical op's semantics, operand for
// operand, its rows with no visible key included (rows.go).
func (attnoptTarget) Lower(e *emitter, o *SDPA) (*graph.Value, error) {
	ins := []*graph.Value{o.Q, o.K, o.V}
	if o.Mask != nil {
		ins = append(ins, o.Mask)
	}
	attrs := []*graph.Attr{graph.FloatAttr("scale", float32(o.Scale)), graph.IntAttr("causal", boolInt(o.Causal))}
	if o.Window > 0 {
		attrs = append(attrs, graph.IntAttr("sliding_window", o.Window))
	}
	attrs = append(attrs, o.Rows.attrs()...)
	return e.op("FlashAttention", "attnopt", ins, attrs...), nil
}

func init() {
	// FlashAttention: output (…, Nq, Dv) from Q (…, Nq, Dqk) and V (…, Nk, Dv).
	graph.RegisterInfer("attnopt", "FlashAttention", inferFlash)
	graph.RegisterInfer("attnopt", "WindowAttention", inferFlash)
	fusedSchemas["attnopt.FlashAttention"] = checkFlash
	fusedSchemas["attnopt.WindowAttention"] = checkFlash
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
