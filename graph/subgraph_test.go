package graph

import (
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/corpus"
	"google.golang.org/protobuf/proto"
)

func tensorVI(name string, dt DType, dims ...int64) *onnxpb.ValueInfoProto {
	vi := &onnxpb.ValueInfoProto{Name: proto.String(name)}
	if dims != nil {
		vi.Type = typeToProto(TensorOf(dt, StaticShape(dims...)))
	} else {
		vi.Type = &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt))}}}
	}
	return vi
}

// loopModel is a Loop over v (float [2]) whose body applies op to v and the
// outer value w; the body declares v without a shape, as TorchScript does.
func loopModel(op string) *onnxpb.ModelProto {
	body := &onnxpb.GraphProto{Name: proto.String("body"),
		Input: []*onnxpb.ValueInfoProto{tensorVI("i", Int64, []int64{}...), tensorVI("c_in", Bool, []int64{}...), tensorVI("v_in", Float32)},
		Node: []*onnxpb.NodeProto{
			{Name: proto.String("keep"), OpType: proto.String("Identity"), Input: []string{"c_in"}, Output: []string{"c_out"}},
			{Name: proto.String("step"), OpType: proto.String(op), Input: []string{"v_in", "w"}, Output: []string{"v_out"},
				Attribute: []*onnxpb.AttributeProto{{Name: proto.String("axis"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(0)}}},
		},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("c_out")}, {Name: proto.String("v_out")}}}
	if op != "Concat" {
		body.Node[1].Attribute = nil
	}
	g := &onnxpb.GraphProto{Name: proto.String("main"),
		Input: []*onnxpb.ValueInfoProto{tensorVI("n", Int64, []int64{}...), tensorVI("v", Float32, 2), tensorVI("w", Float32, 2)},
		Node: []*onnxpb.NodeProto{{Name: proto.String("loop"), OpType: proto.String("Loop"), Input: []string{"n", "", "v"}, Output: []string{"v_final"},
			Attribute: []*onnxpb.AttributeProto{{Name: proto.String("body"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body}}}},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("v_final")}}}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}}}
}

// A Loop body's loop-carried input takes the initial value's static shape
// only when the body gives it back unchanged (Add), never when it grows
// (Concat); the outer value it reads becomes an input typed from outside.
func TestSubgraphLoopCarriedShape(t *testing.T) {
	for _, tc := range []struct {
		op     string
		ranked bool
	}{{"Add", true}, {"Concat", false}} {
		m, err := FromProto(loopModel(tc.op), "")
		if err != nil {
			t.Fatal(err)
		}
		subs, err := m.Graph.Subgraphs(m.Graph.Nodes[0], nil)
		if err != nil || len(subs) != 1 {
			t.Fatalf("%s: %d subgraphs, %v", tc.op, len(subs), err)
		}
		g := subs[0].Model.Graph
		if v := g.Value("v_in"); v.Type.Ranked != tc.ranked {
			t.Errorf("%s: v_in typed %s; want ranked %v", tc.op, v.Type, tc.ranked)
		}
		if w := g.Value("w"); w == nil || w.Kind != KindInput || w.Type.String() != TensorOf(Float32, StaticShape(2)).String() {
			t.Errorf("%s: outer w in the body: %+v", tc.op, w)
		}
	}
}

// Wrapping every subgraph and writing it back unchanged gives the model as
// loaded; a name another scope uses is never generated in a wrapped graph.
func TestSubgraphWrapInlineRoundTrip(t *testing.T) {
	paths := []string{
		filepath.Join("..", "testdata", "models", "cond_if_dynamo", "model.onnx"),
		filepath.Join("..", "testdata", "models", "loop_script", "model.onnx"),
	}
	if p, ok := corpus.Lookup("onnxruntime", "tiny_gpt2_beamsearch.onnx"); ok {
		paths = append(paths, p)
	} else {
		t.Logf("corpus not present: %s skipped", p)
	}
	for _, path := range paths {
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		want := m.ToProto()
		reserved := map[string]bool{"taken_elsewhere": true}
		for _, n := range m.Graph.Nodes {
			if !n.HasSubgraphs() {
				continue
			}
			subs, err := m.Graph.Subgraphs(n, reserved)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, s := range subs {
				if got := s.Model.Graph.UniqueName("taken_elsewhere"); got == "taken_elsewhere" {
					t.Errorf("%s: a reserved name was handed out", path)
				}
				if got := s.Model.Graph.UniqueName(n.Name); got == n.Name {
					t.Errorf("%s: the enclosing node's name %q was handed out", path, n.Name)
				}
				if err := s.Inline(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := m.VerifyForSave(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := m.ToProto(); !proto.Equal(want, got) {
			t.Errorf("%s: wrap and inline changed the model", path)
		}
	}
}

// --dim may pin a symbol only a subgraph's inputs declare (a BeamSearch
// decoder's past_seq_len): the wrapped subgraph gets it; a symbol declared
// nowhere is still refused.
func TestPinsReachSubgraphInputs(t *testing.T) {
	mp := loopModel("Add")
	body := mp.Graph.Node[0].Attribute[0].G
	body.Input[2].Type = &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
		ElemType: proto.Int32(int32(Float32)), Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
			{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "n_sym"}}}}}}}
	for _, tc := range []struct {
		dims map[string]int64
		ok   bool
	}{{map[string]int64{"n_sym": 2}, true}, {map[string]int64{"nope": 2}, false}} {
		m, err := FromProto(proto.Clone(mp).(*onnxpb.ModelProto), "")
		if err != nil {
			t.Fatal(err)
		}
		err = Pins{Dims: tc.dims}.Apply(m.Graph)
		if (err == nil) != tc.ok {
			t.Fatalf("%v: %v", tc.dims, err)
		}
		if !tc.ok {
			continue
		}
		subs, err := m.Graph.Subgraphs(m.Graph.Nodes[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := subs[0].Model.Graph.Value("v_in").Type.String(); got != TensorOf(Float32, StaticShape(2)).String() {
			t.Errorf("v_in in the wrapped body: %s, want float32[2]", got)
		}
	}
}
