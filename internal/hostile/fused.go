package hostile

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

// FusedCases are fused attention ops that ONNX Runtime refuses (issue 24),
// or attnopt's custom-op library does: attnopt lifted them into ops that ran,
// wrote them back, or computed with them, with exit 0. Every command
// must refuse them as it refuses a malformed file, naming the node
// (passes/schema/runtime.go).
func FusedCases() []Case {
	return append([]Case{
		fused("Attention-23 past_key heads differ from K", `node "att" (ai.onnx.Attention): "pk" has 4 heads, K and V 2`,
			func(b *testgraph.B) []string {
				return onnxAttention(b, nil, []int64{1, 2, 4, 8}, []int64{1, 4, 3, 8})
			}),
		fused("Attention-23 q_num_heads differs from Q", `q_num_heads 4, but Q "q" has 2 heads`,
			func(b *testgraph.B) []string {
				return onnxAttention(b, []*onnxpb.AttributeProto{testgraph.Int("q_num_heads", 4)}, []int64{1, 2, 4, 8}, nil)
			}),
		fused("Attention-23 rank 3, hidden size not a multiple of q_num_heads", `is not a multiple of q_num_heads 3`,
			func(b *testgraph.B) []string {
				return onnxAttention(b, []*onnxpb.AttributeProto{testgraph.Int("q_num_heads", 3), testgraph.Int("kv_num_heads", 3)},
					[]int64{1, 4, 8}, nil)
			}),
		fused("Attention-23 scale 0", `scale 0: ONNX Runtime takes a scale > 0`,
			func(b *testgraph.B) []string {
				return onnxAttention(b, []*onnxpb.AttributeProto{testgraph.Float("scale", 0)}, []int64{1, 2, 4, 8}, nil)
			}),
		fused("Attention-23 scale -0.5", `scale -0.5: ONNX Runtime takes a scale > 0`,
			func(b *testgraph.B) []string {
				return onnxAttention(b, []*onnxpb.AttributeProto{testgraph.Float("scale", -0.5)}, []int64{1, 2, 4, 8}, nil)
			}),
		fused("MultiHeadAttention num_heads does not divide the hidden size", `query "q" hidden size 8 is not a multiple of num_heads 3`,
			func(b *testgraph.B) []string {
				b.Import("com.microsoft", 1)
				q, k, v := b.Input("q", graph.Float32, 1, 4, 8), b.Input("k", graph.Float32, 1, 4, 8), b.Input("v", graph.Float32, 1, 4, 8)
				bias := b.Input("bias", graph.Float32, 1, 1, 4, 4)
				return nodeNamed(b, "mha", "MultiHeadAttention", "com.microsoft", []string{q, k, v, "", "", bias}, 1, testgraph.Int("num_heads", 3))
			}),
		fused("com.microsoft.Attention weights do not fit the input", `weights "c_1" have 10 rows, but input "x" is 12 wide`,
			func(b *testgraph.B) []string {
				b.Import("com.microsoft", 1)
				x := b.Input("x", graph.Float32, 2, 5, 12)
				return nodeNamed(b, "msatt", "Attention", "com.microsoft", []string{x, b.Weight(graph.Float32, 10, 36), b.Weight(graph.Float32, 36)},
					1, testgraph.Int("num_heads", 3))
			}),
		attnoptOp("WindowAttention whose spatial_shape wraps to the token count", "WindowAttention",
			`node "hostile" (attnopt.WindowAttention): spatial_shape [3689348814741910324 5]`,
			testgraph.Float("scale", 0.5), testgraph.Ints("spatial_shape", 3689348814741910324, 5),
			testgraph.Ints("window", 1, 1), testgraph.Ints("shift", 1000, 0)),
		attnoptOp("FlashAttention whose causal is a FLOAT", "FlashAttention", `attribute "causal" is FLOAT, not INT`,
			testgraph.Float("scale", 0.5), testgraph.Float("causal", 1)),
		attnoptOp("FlashAttention whose scale is -1", "FlashAttention", `scale -1 must be finite and > 0`,
			testgraph.Float("scale", -1)),
		attnoptOpD("FlashAttention of head size 300", "FlashAttention", 300,
			`node "hostile" (attnopt.FlashAttention): Q "q" has head size 300: the kernels take 1..256`, testgraph.Float("scale", 0.5)),
		{Name: "BeamSearch whose decoder has no outputs", Want: `node "beam" (com.microsoft.BeamSearch): decoder has 0 output(s)`,
			Build: func(dir string) (string, error) {
				b := testgraph.New(17)
				b.Import("com.microsoft", 1)
				ids := b.Input("input_ids", graph.Int32, 1, 3)
				dec := &onnxpb.GraphProto{Name: proto.String("decoder"), Input: []*onnxpb.ValueInfoProto{
					{Name: proto.String("input_ids")}, {Name: proto.String("position_ids")},
					{Name: proto.String("attention_mask")}, {Name: proto.String("past_0")}}}
				b.Output(nodeNamed(b, "beam", "BeamSearch", "com.microsoft", []string{ids}, 1,
					graphAttr("decoder", dec), testgraph.Int("eos_token_id", 0), testgraph.Int("pad_token_id", 0))[0])
				return writeBytes(dir, b.Bytes())
			}},
	}, GeometryCases()...)
}

// attnoptOp is node "hostile", an attnopt op over Q, K, V (1, 1, 4, 4).
func attnoptOp(name, op, want string, attrs ...*onnxpb.AttributeProto) Case {
	return attnoptOpD(name, op, 4, want, attrs...)
}

// attnoptOpD is node "hostile" over Q, K, V (1, 1, 4, d).
func attnoptOpD(name, op string, d int, want string, attrs ...*onnxpb.AttributeProto) Case {
	qkv := []any{1, 1, 4, d}
	return attnoptShapes(name, op, want, [4][]any{qkv, qkv, qkv}, attrs...)
}

// attnoptShapes is node "hostile" over Q, K, V (and a float mask when
// shapes[3] is set) of the given shapes.
func attnoptShapes(name, op, want string, shapes [4][]any, attrs ...*onnxpb.AttributeProto) Case {
	return Case{Name: name, Want: want, Build: func(dir string) (string, error) {
		b := testgraph.New(17)
		b.Import("attnopt", 1)
		ins := []string{b.Input("q", graph.Float32, shapes[0]...), b.Input("k", graph.Float32, shapes[1]...), b.Input("v", graph.Float32, shapes[2]...)}
		if shapes[3] != nil {
			ins = append(ins, b.Input("mask", graph.Float32, shapes[3]...))
		}
		b.Output(nodeNamed(b, "hostile", op, "attnopt", ins, 1, attrs...)[0])
		return writeBytes(dir, b.Bytes())
	}}
}

// GeometryCases are attnopt ops already in a model whose shapes disagree
// (issue 34): the library refuses them when it runs; attnopt refuses them
// on load with the same rules (passes/schema/fused.go's checkFlash).
func GeometryCases() []Case {
	qkv := []any{1, 2, 4, 8}
	flash := func(name, want string, shapes [4][]any) Case {
		for i := range shapes[:3] {
			if shapes[i] == nil {
				shapes[i] = qkv
			}
		}
		return attnoptShapes("FlashAttention "+name, "FlashAttention", `node "hostile" (attnopt.FlashAttention): `+want, shapes, testgraph.Float("scale", 0.5))
	}
	return []Case{
		flash("mask batch 2", `mask "mask" [2,1,4,4] does not broadcast to [1,2,4,4]`, [4][]any{3: {2, 1, 4, 4}}),
		flash("mask heads 3", `mask "mask" [1,3,4,4] does not broadcast`, [4][]any{3: {1, 3, 4, 4}}),
		flash("mask of Nk+1 keys", `mask "mask" [1,1,4,5] does not broadcast`, [4][]any{3: {1, 1, 4, 5}}),
		flash("Q head size 8, K 7", `Q "q" has head size 8, K "k" 7`, [4][]any{1: {1, 2, 4, 7}}),
		flash("3 query heads over 2 K/V heads", `3 query heads are not a multiple of K "k"'s 2`, [4][]any{0: {1, 3, 4, 8}}),
		flash("V of 5 keys, K of 4", `K "k" has 4 keys, V "v" has 5`, [4][]any{2: {1, 2, 5, 8}}),
		flash("K of rank 3", `"q", "k", "v" have ranks 4, 3, 4`, [4][]any{1: {2, 4, 8}}),
		attnoptShapes("WindowAttention mask batch 2", "WindowAttention",
			`node "hostile" (attnopt.WindowAttention): mask "mask" [2,1,4,4] does not broadcast to [1,2,4,4]`,
			[4][]any{qkv, qkv, qkv, {2, 1, 4, 4}},
			testgraph.Float("scale", 0.5), testgraph.Ints("spatial_shape", 4), testgraph.Ints("window", 2)),
	}
}

// fused is a case built at opset 23 whose outputs are those build returns.
func fused(name, want string, build func(b *testgraph.B) []string) Case {
	return Case{Name: name, Want: want, Build: func(dir string) (string, error) {
		b := testgraph.New(23)
		for _, o := range build(b) {
			b.Output(o)
		}
		return writeBytes(dir, b.Bytes())
	}}
}

// onnxAttention is node "att": Attention(q, k, v) of shape qkv, with a
// cache of shape past (and its present outputs) when past is set.
func onnxAttention(b *testgraph.B, attrs []*onnxpb.AttributeProto, qkv, past []int64) []string {
	dims := func(s []int64) []any {
		out := make([]any, len(s))
		for i, d := range s {
			out[i] = d
		}
		return out
	}
	ins := []string{b.Input("q", graph.Float32, dims(qkv)...), b.Input("k", graph.Float32, dims(qkv)...), b.Input("v", graph.Float32, dims(qkv)...)}
	if past == nil {
		return nodeNamed(b, "att", "Attention", "", ins, 1, attrs...)
	}
	ins = append(ins, "", b.Input("pk", graph.Float32, dims(past)...), b.Input("pv", graph.Float32, dims(past)...))
	return nodeNamed(b, "att", "Attention", "", ins, 3, attrs...)
}

// nodeNamed adds a node and renames it, so the expected message can name it.
func nodeNamed(b *testgraph.B, name, op, domain string, ins []string, outs int, attrs ...*onnxpb.AttributeProto) []string {
	o := b.NodeN(op, domain, ins, outs, attrs...)
	b.RenameLastNode(name)
	return o
}
