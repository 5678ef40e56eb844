package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

func branch(name, reads, out string) *onnxpb.AttributeProto {
	g := &onnxpb.GraphProto{Name: proto.String(name),
		Node:   []*onnxpb.NodeProto{{Name: proto.String(name + "_id"), OpType: proto.String("Identity"), Input: []string{reads}, Output: []string{out}}},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String(out)}}}
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
}

// siteReadBySubgraph is an attention block whose output (before a Relu) an
// If's branches also read by name; the branches define names a rewrite
// would otherwise generate, and a stale value_info claims one of them is
// int64.
func siteReadBySubgraph() *onnxpb.ModelProto {
	mp := testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 8, D: 4, Scale: "mul"}).Proto()
	g := mp.Graph
	// The block's last node writes "out"; call it "site_out" and add
	// Relu(site_out) → out.
	last := g.Node[len(g.Node)-1]
	last.Output[0] = "site_out"
	g.Node = append(g.Node, &onnxpb.NodeProto{Name: proto.String("relu"), OpType: proto.String("Relu"), Input: []string{"site_out"}, Output: []string{"out"}})
	g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String("cond"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(graph.Bool)), Shape: &onnxpb.TensorShapeProto{}}}}})
	g.Node = append(g.Node, &onnxpb.NodeProto{Name: proto.String("if"), OpType: proto.String("If"), Input: []string{"cond"}, Output: []string{"if_out"},
		Attribute: []*onnxpb.AttributeProto{
			branch("then_branch", "site_out", "attnopt/site0/FlashAttention_out"),
			branch("else_branch", "site_out", "attnopt/site0/Transpose_out")}})
	g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: proto.String("if_out")})
	g.ValueInfo = append(g.ValueInfo, &onnxpb.ValueInfoProto{Name: proto.String("attnopt/site0/Transpose_out_1"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(graph.Int64)), Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 3}}}}}}}})
	return mp
}

// TestRewriteKeepsSubgraphReferencesValid: the site is fused, the If still
// reads a value of the name it was given, no generated name is defined
// again inside a subgraph, and the stale int64 value_info is not written
// against a float value.
func TestRewriteKeepsSubgraphReferencesValid(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "model.onnx")
	b, _ := proto.Marshal(siteReadBySubgraph())
	os.WriteFile(in, b, 0o644)
	out := filepath.Join(dir, "out.onnx")
	code, stdout, stderr := runCLI("rewrite", in, "-o", out, "--quiet", "--min-scores", "0")
	if code != 0 || !strings.Contains(stdout, "1 of 1 site(s) fused") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	m, err := graph.Load(out)
	if err != nil {
		t.Fatalf("the output does not load: %v", err)
	}
	if err := m.VerifyForSave(); err != nil {
		t.Fatal(err)
	}
	v := m.Graph.Value("site_out")
	if v == nil || v.Producer() == nil {
		t.Fatal("site_out, which the If reads, is not defined in the output")
	}
	var mp onnxpb.ModelProto
	data, _ := os.ReadFile(out)
	proto.Unmarshal(data, &mp)
	for _, n := range mp.Graph.Node {
		for _, o := range n.Output {
			if strings.HasPrefix(o, "attnopt/site0/FlashAttention_out") || o == "attnopt/site0/Transpose_out" {
				if o == "attnopt/site0/FlashAttention_out" || o == "attnopt/site0/Transpose_out" {
					t.Errorf("generated name %q is also defined inside the If", o)
				}
			}
		}
	}
	for _, vi := range mp.Graph.ValueInfo {
		if vi.GetName() == "attnopt/site0/Transpose_out_1" && m.Graph.Value(vi.GetName()) != nil &&
			vi.GetType().GetTensorType().GetElemType() == int32(graph.Int64) {
			t.Errorf("stale int64 value_info kept for a float value")
		}
	}
}
