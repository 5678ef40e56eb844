package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// EmbedLayerNormalization's three outputs and FastGelu's get their shapes,
// so the attention after them in a GPT-2 decoder has its own.
func TestInferContribOps(t *testing.T) {
	vi := func(name string, dt DType, dims ...any) *onnxpb.ValueInfoProto {
		s := &onnxpb.TensorShapeProto{}
		for _, d := range dims {
			switch d := d.(type) {
			case int:
				s.Dim = append(s.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
			case string:
				s.Dim = append(s.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
			}
		}
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: s}}}}
	}
	ms := proto.String("com.microsoft")
	g := &onnxpb.GraphProto{Name: proto.String("g"),
		Input: []*onnxpb.ValueInfoProto{vi("ids", Int32, "batch", "seq"), vi("word", Float32, 50, 8), vi("pos", Float32, 16, 8),
			vi("gamma", Float32, 8), vi("beta", Float32, 8)},
		Node: []*onnxpb.NodeProto{
			{Name: proto.String("emb"), OpType: proto.String("EmbedLayerNormalization"), Domain: ms,
				Input: []string{"ids", "", "word", "pos", "", "gamma", "beta"}, Output: []string{"e", "mask_index", "e_sum"}},
			{Name: proto.String("gelu"), OpType: proto.String("FastGelu"), Domain: ms, Input: []string{"e_sum"}, Output: []string{"act"}},
		},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("e")}, {Name: proto.String("mask_index")}, {Name: proto.String("act")}}}
	m, err := FromProto(&onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{
		{Domain: proto.String(""), Version: proto.Int64(17)}, {Domain: ms, Version: proto.Int64(1)}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Type{
		"e":          TensorOf(Float32, Shape{Sym("batch"), Sym("seq"), D(8)}),
		"e_sum":      TensorOf(Float32, Shape{Sym("batch"), Sym("seq"), D(8)}),
		"act":        TensorOf(Float32, Shape{Sym("batch"), Sym("seq"), D(8)}),
		"mask_index": TensorOf(Int32, Shape{Sym("batch")}),
	} {
		if got := m.Graph.Value(name).Type; got.String() != want.String() {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// The contrib rules give the shapes ONNX Runtime computes on every
// testdata/ops/ms_* case (export_contrib_ops.py), with the outputs' declared
// types removed so the rules alone decide.
func TestInferContribMatchesORT(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "ops", "ms_*"))
	if len(dirs) < 10 {
		t.Fatalf("%d ms_* cases under testdata/ops, want 10 or more", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			var pb onnxpb.ModelProto
			if err := proto.Unmarshal(data, &pb); err != nil {
				t.Fatal(err)
			}
			for _, o := range pb.Graph.Output {
				o.Type = nil
			}
			m, err := FromProto(&pb, "")
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range m.Graph.Outputs {
				raw, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("output_%d.pb", i)))
				if err != nil {
					t.Fatal(err)
				}
				var tp onnxpb.TensorProto
				if err := proto.Unmarshal(raw, &tp); err != nil {
					t.Fatal(err)
				}
				want := TensorOf(DType(tp.GetDataType()), StaticShape(tp.Dims...))
				if o.Type.String() != want.String() {
					t.Errorf("%s: %s, ONNX Runtime gives %s", o.Name, o.Type, want)
				}
			}
		})
	}
}
