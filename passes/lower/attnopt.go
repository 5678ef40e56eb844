package lower

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// attnoptTarget rewrites into attnopt.FlashAttention (docs/design.md §4), run by
// the kernels in kernels/ through the ONNX Runtime custom-op library.
type attnoptTarget struct{}

func init() { registerTarget(attnoptTarget{}) }

func (attnoptTarget) Name() string                          { return "attnopt" }
func (attnoptTarget) Op() string                            { return "attnopt.FlashAttention" }
func (attnoptTarget) WindowOp() string                      { return "attnopt.WindowAttention" }
func (attnoptTarget) Import() graph.Opset                   { return graph.Opset{Domain: "attnopt", Version: 1} }
func (attnoptTarget) CheckModel(m *graph.Model) error       { return nil }
func (attnoptTarget) Materialises(o *canonical.SDPA) string { return "" }
func (attnoptTarget) OnCUDA(o *canonical.SDPA) CUDAPath {
	return CUDAPath{CUDAAttnopt, "attnopt.FlashAttention's CUDA kernel (libattnopt_ort.so)"}
}
func (attnoptTarget) Owns(n *graph.Node) bool { return n.Domain == "attnopt" }

func (attnoptTarget) Accept(o *canonical.SDPA) error {
	switch o.DType() {
	case graph.Float32, graph.Float16, graph.BFloat16:
		return nil
	}
	return match.Rejectf(match.CodeTarget, o.Q, "%s", "FlashAttention takes float32, float16 or bfloat16, not "+o.DType().String())
}

// Lower: FlashAttention is the canonical op's semantics, operand for
// operand, its rows with no visible key included (rows.go), and
// WindowAttention the window plan's.
func (attnoptTarget) Lower(e *emit.Emitter, o *canonical.SDPA) (*graph.Value, error) {
	if sp := o.Spatial; sp != nil {
		return e.Op("WindowAttention", "attnopt", []*graph.Value{o.Q, o.K, o.V},
			graph.IntsAttr("spatial_shape", sp.Grid), graph.IntsAttr("window", sp.Window),
			graph.IntsAttr("shift", sp.Shift), graph.FloatAttr("scale", float32(o.Scale))), nil
	}
	ins := []*graph.Value{o.Q, o.K, o.V}
	if o.Mask != nil {
		ins = append(ins, o.Mask)
	}
	attrs := []*graph.Attr{graph.FloatAttr("scale", float32(o.Scale)), graph.IntAttr("causal", canonical.BoolInt(o.Causal))}
	attrs = append(attrs, canonical.SoftcapAttrs(o.Softcap)...)
	if o.Window > 0 {
		attrs = append(attrs, graph.IntAttr("sliding_window", o.Window))
	}
	attrs = append(attrs, canonical.RowsAttrs(o.Rows)...)
	return e.Op("FlashAttention", "attnopt", ins, attrs...), nil
}
