package eval

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// If runs one branch as a model of its own: the values the branch reads
// from the enclosing graph become its inputs, fed from the caller's values.
// It is executed by execute (it needs those values), not through a kernel.

func init() {
	register("", "If", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return nil, fmt.Errorf("If runs through execute")
	})
}

func runIf(m *graph.Model, n *graph.Node, cond *Tensor, get func(string) (*Tensor, error), opts Options) ([]*Tensor, error) {
	if cond == nil || cond.Numel() != 1 || cond.DType != graph.Bool {
		return nil, fmt.Errorf("If condition must be one bool")
	}
	branch := "else_branch"
	if cond.B[0] {
		branch = "then_branch"
	}
	a := n.Attr(branch)
	if a == nil || a.GraphProto() == nil {
		return nil, fmt.Errorf("If has no %s graph", branch)
	}
	sub, feeds, err := bodyModel(m, a.GraphProto(), get)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", branch, err)
	}
	res, err := Run(sub, feeds, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", branch, err)
	}
	gp := a.GraphProto()
	outs := make([]*Tensor, len(gp.GetOutput()))
	for i, o := range gp.GetOutput() {
		outs[i] = res[o.GetName()]
	}
	return outs, nil
}

// bodyModel makes a subgraph a model of its own: the values it reads from
// the enclosing graph become inputs, fed from get.
func bodyModel(m *graph.Model, body *onnxpb.GraphProto, get func(string) (*Tensor, error)) (*graph.Model, map[string]*Tensor, error) {
	gp := proto.Clone(body).(*onnxpb.GraphProto)
	feeds := map[string]*Tensor{}
	for _, name := range outerReads(gp) {
		t, err := get(name)
		if err != nil {
			return nil, nil, fmt.Errorf("reads %w", err)
		}
		feeds[name] = t
		gp.Input = append(gp.Input, valueInfoOf(name, t))
	}
	pb := &onnxpb.ModelProto{IrVersion: proto.Int64(m.IRVersion), Graph: gp}
	for _, o := range m.Opsets {
		pb.OpsetImport = append(pb.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(o.Domain), Version: proto.Int64(o.Version)})
	}
	sub, err := graph.FromProto(pb, "")
	return sub, feeds, err
}

// outerReads lists, once each, the names a branch's nodes read that it does
// not define itself (nested subgraphs' reads are not followed).
func outerReads(gp *onnxpb.GraphProto) []string {
	defined := map[string]bool{"": true}
	for _, v := range gp.GetInput() {
		defined[v.GetName()] = true
	}
	for _, t := range gp.GetInitializer() {
		defined[t.GetName()] = true
	}
	for _, n := range gp.GetNode() {
		for _, o := range n.GetOutput() {
			defined[o] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range gp.GetNode() {
		for _, i := range n.GetInput() {
			if !defined[i] && !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

func valueInfoOf(name string, t *Tensor) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range t.Shape {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(t.DType)), Shape: shape}}}}
}
