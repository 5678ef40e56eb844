package passes_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
	"google.golang.org/protobuf/proto"
)

// nestedCase is a model whose attention sits inside subgraphs.
type nestedCase struct {
	name  string
	load  func(t *testing.T) []byte
	paths []string // the subgraph of each site, by site ID ("": the main graph)
	// runs are the inputs the numbers are compared on, each over seeded
	// random ones, so that every branch and several trip counts run.
	runs []map[string]*eval.Tensor
}

func fixtureBytes(name string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "models", name, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
}

func fill(v float32, n int) *eval.Tensor {
	t := eval.NewTensor(graph.Float32, []int{n})
	for i := range t.F {
		t.F[i] = v
	}
	return t
}

var (
	thenElse = []string{"If node_cond__0/then_branch", "If node_cond__0/else_branch"}
	// x picks the branch: sum > 0 takes then_branch (full attention).
	bothBranches = []map[string]*eval.Tensor{{"x": fill(1, 3)}, {"x": fill(-1, 3)}}
)

var nestedCases = []nestedCase{
	{"If branches with MatMul→Softmax→MatMul (torch.cond, opset 18)", fixtureBytes("cond_if_dynamo"), thenElse, bothBranches},
	{"If branches with ONNX Attention (torch.cond, opset 23)", fixtureBytes("cond_dynamo_op23"), thenElse, bothBranches},
	{"Loop body (script_if_tracing, opset 17)", fixtureBytes("loop_script"), []string{"Loop Loop_10/body"},
		[]map[string]*eval.Tensor{{"steps": eval.FromInts(nil, []int64{0})}, {"steps": eval.FromInts(nil, []int64{1})}, {"steps": eval.FromInts(nil, []int64{3})}}},
	{"a main-graph site before an If's sites", mainAndIf, append([]string{""}, thenElse...), bothBranches},
	{"If inside an If's branch (depth 2)", ifInIf, []string{"If outer/then_branch / If node_cond__0/then_branch", "If outer/then_branch / If node_cond__0/else_branch"},
		[]map[string]*eval.Tensor{
			{"c": eval.FromBools(nil, []bool{true}), "x": fill(1, 3)},
			{"c": eval.FromBools(nil, []bool{true}), "x": fill(-1, 3)},
			{"c": eval.FromBools(nil, []bool{false}), "x": fill(1, 3)}}},
}

// mainAndIf adds to cond_if_dynamo's main graph an attention of its own
// over q, k, v, as a second output: the main graph's site is site 0, the
// branches' follow.
func mainAndIf(t *testing.T) []byte {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(fixtureBytes("cond_if_dynamo")(t), &mp); err != nil {
		t.Fatal(err)
	}
	g := mp.Graph
	node := func(op string, ins []string, out string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{Name: proto.String("main_" + op), OpType: proto.String(op), Input: ins, Output: []string{out}, Attribute: attrs}
	}
	g.Node = append(g.Node,
		node("Transpose", []string{"k"}, "main_kt", &onnxpb.AttributeProto{Name: proto.String("perm"), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: []int64{0, 1, 3, 2}}),
		node("MatMul", []string{"q", "main_kt"}, "main_scores"),
		node("Softmax", []string{"main_scores"}, "main_probs", &onnxpb.AttributeProto{Name: proto.String("axis"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(-1)}),
		&onnxpb.NodeProto{Name: proto.String("main_MatMul_1"), OpType: proto.String("MatMul"), Input: []string{"main_probs", "v"}, Output: []string{"main_att"}})
	out := proto.Clone(g.Output[0]).(*onnxpb.ValueInfoProto)
	out.Name = proto.String("main_att")
	g.Output = append(g.Output, out)
	data, err := proto.Marshal(&mp)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ifInIf puts cond_if_dynamo's whole graph into the then_branch of an outer
// If on a new bool input c; the else_branch returns q.
func ifInIf(t *testing.T) []byte {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(fixtureBytes("cond_if_dynamo")(t), &mp); err != nil {
		t.Fatal(err)
	}
	inner := mp.Graph
	then := &onnxpb.GraphProto{Name: proto.String("then"), Node: inner.Node, Initializer: inner.Initializer, Output: inner.Output}
	els := &onnxpb.GraphProto{Name: proto.String("else"),
		Node:   []*onnxpb.NodeProto{{Name: proto.String("pass_q"), OpType: proto.String("Identity"), Input: []string{"q"}, Output: []string{"y_else"}}},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y_else")}}}
	graphAttr := func(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
	}
	cond := &onnxpb.ValueInfoProto{Name: proto.String("c"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(graph.Bool)), Shape: &onnxpb.TensorShapeProto{}}}}}
	out := proto.Clone(inner.Output[0]).(*onnxpb.ValueInfoProto)
	out.Name = proto.String("out")
	mp.Graph = &onnxpb.GraphProto{Name: proto.String("outer"), Input: append([]*onnxpb.ValueInfoProto{cond}, inner.Input...),
		Node: []*onnxpb.NodeProto{{Name: proto.String("outer"), OpType: proto.String("If"), Input: []string{"c"}, Output: []string{"out"},
			Attribute: []*onnxpb.AttributeProto{graphAttr("then_branch", then), graphAttr("else_branch", els)}}},
		Output: []*onnxpb.ValueInfoProto{out}}
	data, err := proto.Marshal(&mp)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRewriteNested: every site inside a subgraph, at any depth, becomes one
// fused op of the target inside that subgraph; the sites are numbered and
// placed as inspect shows them; no name is defined twice across scopes;
// the output is deterministic; and the rewrite computes what the original
// does on every branch and trip count (Go runtime; validate's fixture test
// repeats the fixtures in ONNX Runtime).
func TestRewriteNested(t *testing.T) {
	for _, tc := range nestedCases {
		for target, op := range map[string]string{"attnopt": "attnopt.FlashAttention", "ort": "com.microsoft.MultiHeadAttention"} {
			t.Run(tc.name+"/"+target, func(t *testing.T) {
				data := tc.load(t)
				orig, err := graph.LoadBytes(data, "")
				if err != nil {
					t.Fatal(err)
				}
				res := FindSites(orig.Graph)
				listed := append(res.Sites, NestedSites(res.Nested)...)
				if len(listed) != len(tc.paths) {
					t.Fatalf("inspect lists %d sites, want %d", len(listed), len(tc.paths))
				}
				var outs [2][]byte
				var rew *graph.Model
				for i := range outs {
					rew, _ = graph.LoadBytes(data, "")
					c, err := Rewrite(rew, Options{Target: target, VerifyEach: true})
					if err != nil {
						t.Fatal(err)
					}
					if c.FusedCount() != len(tc.paths) {
						t.Fatalf("fused %d, want %d: %+v", c.FusedCount(), len(tc.paths), c.Actions)
					}
					for k, a := range c.Actions {
						if a.Site.ID != k || a.Site.Path != tc.paths[k] || listed[k].ID != k || listed[k].Path != tc.paths[k] || a.Op != op {
							t.Errorf("action %d: site %d at %q (%s); inspect: site %d at %q; want %q", k, a.Site.ID, a.Site.Path, a.Op, listed[k].ID, listed[k].Path, tc.paths[k])
						}
					}
					if err := rew.VerifyForSave(); err != nil {
						t.Fatal(err)
					}
					outs[i], _ = rew.Marshal()
				}
				if !bytes.Equal(outs[0], outs[1]) {
					t.Error("two rewrites of the same input differ")
				}
				var mp onnxpb.ModelProto
				proto.Unmarshal(outs[0], &mp)
				ops := opsPerScope(mp.Graph, "", map[string]map[string]int{})
				for _, p := range tc.paths {
					if ops[p][op] != 1 || ops[p]["ai.onnx.Softmax"] != 0 || ops[p]["ai.onnx.Attention"] != 0 {
						t.Errorf("subgraph %q holds %v, want one %s and no Softmax or Attention", p, ops[p], op)
					}
				}
				checkNamesUnique(t, mp.Graph)
				rew, err = graph.LoadBytes(outs[0], "")
				if err != nil {
					t.Fatalf("the output does not load: %v", err)
				}
				for i, run := range tc.runs {
					ins, err := validate.RandomInputs(orig, int64(i), nil)
					if err != nil {
						t.Fatal(err)
					}
					for k, v := range run {
						ins[k] = v
					}
					compareOn(t, orig, rew, ins)
				}
			})
		}
	}
}

// opsPerScope counts "domain.Op" per subgraph path (ScopePath's form).
func opsPerScope(g *onnxpb.GraphProto, path string, into map[string]map[string]int) map[string]map[string]int {
	if into[path] == nil {
		into[path] = map[string]int{}
	}
	for _, n := range g.Node {
		into[path][OpName(&graph.Node{OpType: n.GetOpType(), Domain: n.GetDomain()})]++
		for _, a := range n.Attribute {
			if a.G != nil {
				p := n.GetOpType() + " " + n.GetName() + "/" + a.GetName()
				if path != "" {
					p = path + " / " + p
				}
				opsPerScope(a.G, p, into)
			}
		}
	}
	return into
}

// checkNamesUnique: no value is defined twice and no node name repeats, in
// any scope of the model.
func checkNamesUnique(t *testing.T, g *onnxpb.GraphProto) {
	t.Helper()
	values, nodes := map[string]int{}, map[string]int{}
	var walk func(g *onnxpb.GraphProto)
	walk = func(g *onnxpb.GraphProto) {
		for _, vi := range g.Input {
			values[vi.GetName()]++
		}
		for _, init := range g.Initializer {
			values[init.GetName()]++
		}
		for _, n := range g.Node {
			nodes[n.GetName()]++
			for _, o := range n.Output {
				values[o]++
			}
			for _, a := range n.Attribute {
				if a.G != nil {
					walk(a.G)
				}
			}
		}
	}
	walk(g)
	for name, k := range values {
		if k > 1 {
			t.Errorf("value %q is defined %d times across scopes", name, k)
		}
	}
	for name, k := range nodes {
		if k > 1 && name != "" {
			t.Errorf("node name %q is used %d times across scopes", name, k)
		}
	}
}

// Sites inside subgraphs are fused exactly even when approximations are
// asked for (their error is measured per site on the main graph only), and
// the plan says so.
func TestRewriteNestedStaysExact(t *testing.T) {
	data := fixtureBytes("cond_if_dynamo")(t)
	for name, approx := range map[string]ApproxOptions{
		"--window 4":                     {Window: []int64{4}},
		"--memory-budget --allow-approx": {MemoryBudget: 1024, AllowApprox: true},
	} {
		orig, _ := graph.LoadBytes(data, "")
		rew, _ := graph.LoadBytes(data, "")
		c, err := Rewrite(rew, Options{Target: "attnopt", Approx: approx})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Actions {
			if !a.Fused || a.Plan.Approximate() || a.Op != "attnopt.FlashAttention" || a.Plan.Reason != "exact: approximations apply to the main graph's sites only" {
				t.Errorf("%s: site %d: fused %v, plan %s (%s), op %s", name, a.Site.ID, a.Fused, a.Plan, a.Plan.Reason, a.Op)
			}
		}
		for _, run := range bothBranches {
			ins, _ := validate.RandomInputs(orig, 1, nil)
			for k, v := range run {
				ins[k] = v
			}
			compareOn(t, orig, rew, ins)
		}
	}
}

// A subgraph that cannot be made a model of its own (here a branch whose
// Softmax and Relu read each other) is listed with the reason, and rewrite
// leaves the model as it was instead of failing.
func TestNestedUnanalysableSubgraph(t *testing.T) {
	cyc := &onnxpb.GraphProto{Name: proto.String("cyc"),
		Node: []*onnxpb.NodeProto{
			{Name: proto.String("sm"), OpType: proto.String("Softmax"), Input: []string{"r"}, Output: []string{"s"}},
			{Name: proto.String("relu"), OpType: proto.String("Relu"), Input: []string{"s"}, Output: []string{"r"}},
		},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("s")}}}
	pass := &onnxpb.GraphProto{Name: proto.String("pass"),
		Node:   []*onnxpb.NodeProto{{Name: proto.String("id"), OpType: proto.String("Identity"), Input: []string{"x"}, Output: []string{"y_else"}}},
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y_else")}}}
	graphAttr := func(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
	}
	vi := func(name string, dt graph.DType) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: &onnxpb.TensorShapeProto{}}}}}
	}
	mp := &onnxpb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}},
		Graph: &onnxpb.GraphProto{Name: proto.String("main"), Input: []*onnxpb.ValueInfoProto{vi("c", graph.Bool), vi("x", graph.Float32)},
			Node: []*onnxpb.NodeProto{{Name: proto.String("if"), OpType: proto.String("If"), Input: []string{"c"}, Output: []string{"y"},
				Attribute: []*onnxpb.AttributeProto{graphAttr("then_branch", cyc), graphAttr("else_branch", pass)}}},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String("y")}}}}
	data, _ := proto.Marshal(mp)
	m, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Skipf("the loader already refuses it: %v", err)
	}
	nested := FindSites(m.Graph).Nested
	if len(nested) != 1 || nested[0].Site != nil || nested[0].Path != "If if/then_branch" || !strings.HasPrefix(nested[0].Reason, "the subgraph cannot be analysed: ") {
		t.Fatalf("nested %+v", nested)
	}
	c, err := Rewrite(m, Options{Target: "attnopt"})
	if err != nil || c.FusedCount() != 0 {
		t.Fatalf("rewrite: %v, %d fused", err, c.FusedCount())
	}
	out, _ := m.Marshal()
	var got onnxpb.ModelProto
	proto.Unmarshal(out, &got)
	if !proto.Equal(mp, &got) {
		t.Error("the model changed")
	}
}
