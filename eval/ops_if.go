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
	// Nested subgraphs' reads too: their values are looked up here.
	for _, name := range graph.FreeNames(gp) {
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

func valueInfoOf(name string, t *Tensor) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range t.Shape {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(t.DType)), Shape: shape}}}}
}
