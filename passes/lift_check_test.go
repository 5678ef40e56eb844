package passes_test

import (
	"math"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"google.golang.org/protobuf/proto"
)

func anyDims(s []int64) []any {
	out := make([]any, len(s))
	for i, d := range s {
		out[i] = d
	}
	return out
}

// attention23 is Attention(q, k, v[, , pk, pv]) at opset 23 with present
// outputs when there is a cache; v gets vs (qkv's shape when nil).
func attention23(qkv, vs, pk, pv []int64, attrs ...*onnxpb.AttributeProto) *testgraph.B {
	b := testgraph.New(23)
	if vs == nil {
		vs = qkv
	}
	ins := []string{b.Input("q", graph.Float32, anyDims(qkv)...), b.Input("k", graph.Float32, anyDims(qkv)...), b.Input("v", graph.Float32, anyDims(vs)...)}
	outs := 1
	if pk != nil {
		ins = append(ins, "", b.Input("pk", graph.Float32, anyDims(pk)...), b.Input("pv", graph.Float32, anyDims(pv)...))
		outs = 3
	}
	for _, o := range b.NodeN("Attention", "", ins, outs, attrs...) {
		b.Output(o)
	}
	return b
}

// msAttention is com.microsoft.Attention over x (2, 5, 12) with weights
// (rows, cols) and a bias of biasLen entries.
func msAttention(rows, cols, biasLen int64, attrs ...*onnxpb.AttributeProto) *testgraph.B {
	b := testgraph.New(17)
	b.Import("com.microsoft", 1)
	x := b.Input("x", graph.Float32, 2, 5, 12)
	b.Output(b.NodeN("Attention", "com.microsoft", []string{x, b.Weight(graph.Float32, rows, cols), b.Weight(graph.Float32, biasLen)}, 1,
		append([]*onnxpb.AttributeProto{testgraph.Int("num_heads", 3)}, attrs...)...)[0])
	return b
}

// beamSearch holds a decoder with ins inputs and outs outputs.
func beamSearch(modelType int64, ins, outs int) *testgraph.B {
	b := testgraph.New(17)
	b.Import("com.microsoft", 1)
	dec := &onnxpb.GraphProto{Name: proto.String("decoder")}
	for i := 0; i < ins; i++ {
		dec.Input = append(dec.Input, &onnxpb.ValueInfoProto{Name: proto.String("in" + string(rune('a'+i)))})
	}
	for i := 0; i < outs; i++ {
		// Each output is an input passed through.
		o := "out" + string(rune('a'+i))
		dec.Node = append(dec.Node, &onnxpb.NodeProto{OpType: proto.String("Identity"), Input: []string{dec.Input[i%max(ins, 1)].GetName()}, Output: []string{o}})
		dec.Output = append(dec.Output, &onnxpb.ValueInfoProto{Name: proto.String(o)})
	}
	attrs := []*onnxpb.AttributeProto{{Name: proto.String("decoder"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: dec},
		testgraph.Int("model_type", modelType)}
	if modelType != 0 {
		enc := &onnxpb.GraphProto{Name: proto.String("encoder"), Input: []*onnxpb.ValueInfoProto{{Name: proto.String("e")}},
			Node:   []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"e"}, Output: []string{"eo"}}},
			Output: []*onnxpb.ValueInfoProto{{Name: proto.String("eo")}}}
		attrs = append(attrs, &onnxpb.AttributeProto{Name: proto.String("encoder"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: enc})
	}
	b.Output(b.NodeN("BeamSearch", "com.microsoft", []string{b.Input("input_ids", graph.Int32, 1, 3)}, 1, attrs...)[0])
	return b
}

// TestRuntimeOpChecks: each op ONNX Runtime refuses, and its valid
// neighbour, through CheckRuntimeOps (which every command runs on load and
// the rewrite before anything else).
func TestRuntimeOpChecks(t *testing.T) {
	q4, p4 := []int64{1, 2, 4, 8}, []int64{1, 2, 3, 8}
	nan := float32(math.NaN())
	for _, c := range []struct {
		name string
		b    *testgraph.B
		want string // "" for valid
	}{
		{"Attention-23 with a cache", attention23(q4, nil, p4, p4), ""},
		{"Attention-23 past_key heads", attention23(q4, nil, []int64{1, 4, 3, 8}, p4), `"pk" has 4 heads, K and V 2`},
		{"Attention-23 past_value head size", attention23(q4, []int64{1, 2, 4, 6}, p4, p4), `"pv" has head size 8, not 6`},
		{"Attention-23 past lengths differ", attention23(q4, nil, p4, []int64{1, 2, 5, 8}), `past_key "pk" holds 3 keys, past_value "pv" 5`},
		{"Attention-23 past batch", attention23(q4, nil, []int64{2, 2, 3, 8}, []int64{2, 2, 3, 8}), `"pk" has batch 2, Q 1`},
		{"Attention-23 q_num_heads matching", attention23(q4, nil, nil, nil, testgraph.Int("q_num_heads", 2)), ""},
		{"Attention-23 kv_num_heads", attention23(q4, nil, nil, nil, testgraph.Int("kv_num_heads", 1)), `kv_num_heads 1, but K "k" has 2 heads`},
		{"Attention-23 rank 3 GQA", attention23([]int64{1, 4, 8}, nil, nil, nil, testgraph.Int("q_num_heads", 2), testgraph.Int("kv_num_heads", 2)), ""},
		{"Attention-23 rank 3 without heads", attention23([]int64{1, 4, 8}, nil, nil, nil), "needs q_num_heads and kv_num_heads"},
		{"Attention-23 rank 3 K width", attention23([]int64{1, 4, 8}, nil, nil, nil, testgraph.Int("q_num_heads", 4), testgraph.Int("kv_num_heads", 1)),
			`K "k" hidden size 8 is not kv_num_heads 1 x the head size 2`},
		{"Attention-23 scale NaN (ONNX Runtime's default)", attention23(q4, nil, nil, nil, testgraph.Float("scale", nan)), ""},
		{"Attention-23 scale 0.25", attention23(q4, nil, nil, nil, testgraph.Float("scale", 0.25)), ""},
		{"Attention-23 scale stored as INT", attention23(q4, nil, nil, nil, testgraph.Int("scale", 1)), `attribute "scale" is INT, not FLOAT`},
		{"com.microsoft.Attention", msAttention(12, 36, 36), ""},
		{"com.microsoft.Attention weight rows", msAttention(10, 36, 36), `weights "c_1" have 10 rows, but input "x" is 12 wide`},
		{"com.microsoft.Attention bias", msAttention(12, 36, 30), `bias "c_2" has 30 entries, the weights 36 columns`},
		{"com.microsoft.Attention heads", msAttention(12, 30, 30), "hidden size 10 is not a multiple of num_heads 3"},
		{"BeamSearch GPT decoder", beamSearch(0, 5, 3), ""},
		{"BeamSearch GPT decoder without outputs", beamSearch(0, 4, 0), "decoder has 0 output(s)"},
		{"BeamSearch GPT decoder inputs", beamSearch(0, 3, 2), "decoder has 3 inputs for 2 outputs"},
		{"BeamSearch T5 decoder", beamSearch(1, 6, 3), ""},
		{"BeamSearch T5 decoder outputs", beamSearch(1, 6, 4), "decoder has 4 output(s); model_type 1 needs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := graph.LoadBytes(c.b.Bytes(), "")
			if err != nil {
				t.Fatal(err)
			}
			err = CheckRuntimeOps(m.Graph)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("valid op refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			// Rewrite refuses the model with the same message, and changes
			// nothing in it.
			if c.want != "" {
				before, _ := m.Marshal()
				_, err := Rewrite(m, Options{Target: "attnopt"})
				var me *ModelError
				if err == nil || !strings.Contains(err.Error(), c.want) || !asModelError(err, &me) {
					t.Fatalf("rewrite: %v, want a ModelError containing %q", err, c.want)
				}
				if after, _ := m.Marshal(); string(after) != string(before) {
					t.Fatal("the refused rewrite changed the model")
				}
			}
		})
	}
}

// TestRuntimeOpChecksInSubgraphs: an invalid op inside an If branch is
// found and named with its subgraph.
func TestRuntimeOpChecksInSubgraphs(t *testing.T) {
	inner := attention23([]int64{1, 2, 4, 8}, nil, []int64{1, 4, 3, 8}, []int64{1, 2, 3, 8}).Proto().Graph
	b := testgraph.New(23)
	c := b.Input("cond", graph.Bool)
	for _, in := range inner.Input {
		b.Input(in.GetName(), graph.Float32, anyDims(shapeDims(in))...)
	}
	branch := &onnxpb.GraphProto{Name: proto.String("then"), Node: inner.Node,
		Output: []*onnxpb.ValueInfoProto{{Name: proto.String(inner.Node[0].Output[0])}}}
	g := func(name string) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: branch}
	}
	b.Output(b.NodeN("If", "", []string{c}, 1, g("then_branch"), g("else_branch"))[0])
	m, err := graph.LoadBytes(b.Bytes(), "")
	if err != nil {
		t.Fatal(err)
	}
	err = CheckRuntimeOps(m.Graph)
	if err == nil || !strings.Contains(err.Error(), "in subgraph If ") || !strings.Contains(err.Error(), `"pk" has 4 heads`) {
		t.Fatalf("got %v, want the branch's Attention named", err)
	}
}

func shapeDims(vi *onnxpb.ValueInfoProto) []int64 {
	var out []int64
	for _, d := range vi.GetType().GetTensorType().GetShape().GetDim() {
		out = append(out, d.GetDimValue())
	}
	return out
}

func asModelError(err error, me **ModelError) bool {
	for e := err; e != nil; {
		if m, ok := e.(*ModelError); ok {
			*me = m
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// TestScalesTheFusedOpsCannotTake: a valid model whose scale is not finite
// and > 0 (ONNX Runtime runs these; the fused ops refuse them) keeps the
// site as it was, with the reason; ONNX Attention's NaN scale is ONNX
// Runtime's "unset" and lifts as 1/√D, checked by numbers.
func TestScalesTheFusedOpsCannotTake(t *testing.T) {
	negSDPA := func() *graph.Model {
		b := testgraph.New(17)
		q, k, v := b.Input("q", graph.Float32, 1, 2, 8, 4), b.Input("k", graph.Float32, 1, 2, 8, 4), b.Input("v", graph.Float32, 1, 2, 8, 4)
		s := b.Node("MatMul", []string{q, b.Node("Transpose", []string{k}, testgraph.Ints("perm", 0, 1, 3, 2))})
		s = b.Node("Mul", []string{s, b.Scalar(-0.125)})
		b.Output(b.Node("MatMul", []string{b.Node("Softmax", []string{s}, testgraph.Int("axis", -1)), v}))
		return b.Model()
	}
	negMHA := func() *graph.Model {
		b := testgraph.New(17)
		b.Import("com.microsoft", 1)
		q, k, v := b.Input("q", graph.Float32, 1, 4, 8), b.Input("k", graph.Float32, 1, 4, 8), b.Input("v", graph.Float32, 1, 4, 8)
		bias := b.Input("bias", graph.Float32, 1, 1, 4, 4)
		b.Output(b.NodeN("MultiHeadAttention", "com.microsoft", []string{q, k, v, "", "", bias}, 1,
			testgraph.Int("num_heads", 2), testgraph.Float("scale", -0.5))[0])
		return b.Model()
	}
	for _, c := range []struct {
		name  string
		build func() *graph.Model
		want  string
	}{
		{"SDPA scaled by -0.125", negSDPA, "scale -0.125: the fused ops take a finite scale > 0"},
		{"MultiHeadAttention scale -0.5", negMHA, "scale -0.5: the fused ops take a finite scale > 0"},
	} {
		for _, target := range []string{"attnopt", "ort", "onnx"} {
			t.Run(c.name+"/"+target, func(t *testing.T) {
				m := c.build()
				if target == "onnx" {
					m.SetOpset("", 23)
				}
				ctx, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				reasons := ""
				for _, a := range ctx.Actions {
					if a.Fused {
						t.Fatalf("fused a site whose scale the fused ops refuse")
					}
					reasons += a.Reason + "; "
				}
				for _, r := range ctx.Match.Rejected {
					reasons += r.Reason + "; "
				}
				if !strings.Contains(reasons, c.want) {
					t.Fatalf("reasons %q, want %q", reasons, c.want)
				}
			})
		}
	}
	t.Run("Attention-23 scale NaN lifts as 1/sqrt(D)", func(t *testing.T) {
		q4 := []int64{1, 2, 4, 8}
		nan := attention23(q4, nil, nil, nil, testgraph.Float("scale", float32(math.NaN()))).Model()
		plain := attention23(q4, nil, nil, nil).Model()
		ctx, err := Rewrite(nan, Options{Target: "attnopt", VerifyEach: true})
		if err != nil || ctx.FusedCount() != 1 {
			t.Fatalf("not lifted: %v %+v", err, ctx.Actions)
		}
		for _, n := range nan.Graph.Nodes {
			if n.OpType == "FlashAttention" {
				if s := n.AttrFloat("scale", 0); math.Abs(float64(s)-1/math.Sqrt(8)) > 1e-7 {
					t.Fatalf("scale %g, want 1/sqrt(8)", s)
				}
			}
		}
		compareModels(t, plain, nan, 5)
	})
}
