package eval

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// counterLoop: a Loop carrying s (float [1]) that adds the iteration number
// each time, stops when s exceeds limit (the body's condition output), and
// scans s at every iteration.
func counterLoop() *graph.Model {
	vi := func(name string, dt graph.DType, dims ...int64) *onnxpb.ValueInfoProto {
		shape := &onnxpb.TensorShapeProto{}
		for _, d := range dims {
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: shape}}}}
	}
	node := func(op string, ins []string, out string) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{Name: proto.String(out), OpType: proto.String(op), Input: ins, Output: []string{out}}
	}
	body := &onnxpb.GraphProto{Name: proto.String("body"),
		Input: []*onnxpb.ValueInfoProto{vi("i", graph.Int64), vi("c", graph.Bool), vi("s", graph.Float32, 1)},
		Node: []*onnxpb.NodeProto{
			node("Cast", []string{"i"}, "i_f"),
			node("Add", []string{"s", "i_f"}, "s_next"),
			node("Less", []string{"s_next", "limit"}, "go_on_1"),
			node("Squeeze", []string{"go_on_1"}, "go_on"),
			node("Identity", []string{"s_next"}, "s_scan"),
		},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("go_on")}, {Name: proto.String("s_next")}, {Name: proto.String("s_scan")}}}
	body.Node[0].Attribute = []*onnxpb.AttributeProto{{Name: proto.String("to"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(graph.Float32))}}
	g := &onnxpb.GraphProto{Name: proto.String("main"),
		Input: []*onnxpb.ValueInfoProto{vi("n", graph.Int64), vi("limit", graph.Float32, 1), vi("s0", graph.Float32, 1)},
		Node: []*onnxpb.NodeProto{{Name: proto.String("loop"), OpType: proto.String("Loop"), Input: []string{"n", "", "s0"}, Output: []string{"s_final", "scan"},
			Attribute: []*onnxpb.AttributeProto{{Name: proto.String("body"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body}}}},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("s_final")}, {Name: proto.String("scan")}}}
	m, err := graph.FromProto(&onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}}, "")
	if err != nil {
		panic(err)
	}
	return m
}

// Loop stops at its trip count or when the body's condition turns false,
// carries values between iterations and stacks its scan outputs.
func TestLoop(t *testing.T) {
	m := counterLoop()
	for _, tc := range []struct {
		name     string
		n        int64
		limit    float32
		final    float32
		scanned  []float32
		scanDims []int
	}{
		{"trip count 0", 0, 100, 5, []float32{}, []int{0}},
		{"trip count 3", 3, 100, 5 + 0 + 1 + 2, []float32{5, 6, 8}, []int{3, 1}},
		// s: 5, 6, 8, 11 ≥ 10 stops after the 4th iteration
		{"condition stops it", 50, 10, 11, []float32{5, 6, 8, 11}, []int{4, 1}},
	} {
		got, err := Run(m, map[string]*Tensor{"n": FromInts(nil, []int64{tc.n}), "limit": FromFloats([]int{1}, []float32{tc.limit}),
			"s0": FromFloats([]int{1}, []float32{5})}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := diff(got["s_final"], FromFloats([]int{1}, []float32{tc.final}), 0, 0); d != "" {
			t.Errorf("%s: final: %s", tc.name, d)
		}
		if tc.n > 0 {
			if d := diff(got["scan"], FromFloats(tc.scanDims, tc.scanned), 0, 0); d != "" {
				t.Errorf("%s: scan: %s", tc.name, d)
			}
		} else if got["scan"].Numel() != 0 {
			t.Errorf("%s: scan of no iteration has %d elements", tc.name, got["scan"].Numel())
		}
	}
}

// The Loop fixture (a self-attention block run `steps` = 3 times) gives
// PyTorch's output.
func TestLoopFixtureMatchesPyTorch(t *testing.T) {
	dir := filepath.Join("..", "testdata", "models", "loop_script")
	m, err := graph.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Skip(err)
	}
	ins := map[string]*Tensor{}
	for i, v := range m.Graph.Inputs {
		x, err := ReadTensorProtoFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			t.Fatal(err)
		}
		ins[v.Name] = x
	}
	want, err := ReadTensorProtoFile(filepath.Join(dir, "test_data_set_0", "output_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(m, ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got[m.Graph.Outputs[0].Name], want, 1e-4, 0); d != "" {
		t.Error(d)
	}
}
