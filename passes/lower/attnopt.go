package lower

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// attnoptTarget rewrites into attnopt.FlashAttention (docs/design.md §4), run by
// the kernels in kernels/ through the ONNX Runtime custom-op library.
type attnoptTarget struct{}

func init() { registerTarget(attnoptTarget{}) }

func (attnoptTarget) Name() string { return "attnopt" }
func (attnoptTarget) Op() string   { return opdef.FlashAttention.FullName() }
func (attnoptTarget) Summary() string {
	return "attnopt's kernels, CPU and CUDA, through its ONNX Runtime custom-op library"
}
func (attnoptTarget) WindowOp() string { return opdef.WindowAttention.FullName() }
func (attnoptTarget) Import() graph.Opset {
	return graph.Opset{Domain: opdef.Domain, Version: opdef.Version}
}
func (attnoptTarget) CheckModel(m *graph.Model) error       { return nil }
func (attnoptTarget) Materialises(o *canonical.SDPA) string { return "" }
func (attnoptTarget) OnCUDA(o *canonical.SDPA) CUDAPath {
	return CUDAPath{Kernel: CUDAAttnopt, Why: "attnopt.FlashAttention's CUDA kernel (libattnopt_ort.so)"}
}
func (attnoptTarget) Owns(n *graph.Node) bool { return n.Domain == "attnopt" }

// Lowers: every row of the table, written as the table's values.
func (attnoptTarget) Lowers() []string {
	var names []string
	for _, a := range opdef.FlashAttention.Attrs {
		names = append(names, a.Name)
	}
	return names
}

// Accept refuses what the kernels would refuse at run time (internal/opdef,
// docs/ops.md): Q's type, a static head size outside the kernels' limit
// (CodeLimit), and a mask of a type or rank FlashAttention does not take.
// The site is then left as it was, with the reason.
func (attnoptTarget) Accept(o *canonical.SDPA) error {
	op := opdef.FlashAttention
	if q := op.Input("Q"); !q.Takes(o.DType()) {
		return match.Rejectf(match.CodeTarget, o.Q, "FlashAttention takes %s, not %s", opdef.TypesText(q.Types), o.DType())
	}
	dqk, ok1 := o.HeadDim().Value()
	dv, ok2 := o.VHeadDim().Value()
	if (ok1 && !opdef.HeadDimOK(dqk)) || (ok2 && !opdef.HeadDimOK(dv)) {
		return match.Rejectf(match.CodeLimit, o.Q, "head sizes Dqk %s, Dv %s: attnopt's kernels take %d..%d (use --target ort)",
			o.HeadDim(), o.VHeadDim(), opdef.HeadDimMin, opdef.HeadDimMax)
	}
	if m := op.Input("mask"); o.Mask != nil && o.Mask.Type.Ranked {
		if dt := o.Mask.Type.DType; dt != graph.Undefined && !m.Takes(dt) {
			return match.Rejectf(match.CodeTarget, o.Mask, "FlashAttention's mask is %s, not %s", opdef.TypesText(m.Types), dt)
		}
		if r := o.Mask.Type.Rank(); r < m.MinRank || r > m.MaxRank {
			return match.Rejectf(match.CodeTarget, o.Mask, "a mask of rank %d: FlashAttention takes rank %d..%d", r, m.MinRank, m.MaxRank)
		}
	}
	return nil
}

// Lower: FlashAttention is the canonical op's semantics, operand for
// operand, its rows with no visible key included (rows.go), and
// WindowAttention the window plan's. Both are written from the table's
// typed values (internal/opdef/attrs_gen.go), so an attribute the table
// gains needs no change here.
func (attnoptTarget) Lower(e *emit.Emitter, o *canonical.SDPA) (*graph.Value, error) {
	ins := []*graph.Value{o.Q, o.K, o.V}
	if o.Windowed != nil {
		return e.Op(opdef.WindowAttention.Name, opdef.Domain, ins, o.Windowed.Attrs()...), nil
	}
	if o.Mask != nil {
		ins = append(ins, o.Mask)
	}
	return e.Op(opdef.FlashAttention.Name, opdef.Domain, ins, o.Attrs.Attrs()...), nil
}
