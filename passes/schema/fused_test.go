package schema_test

import (
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/schema"
)

// The fused-op schemas accept what the targets write and name the value at
// fault otherwise.
func TestFusedOpSchemas(t *testing.T) {
	type in struct {
		name string
		dims []any
		dt   graph.DType
	}
	f32 := graph.Float32
	cases := []struct {
		name, op, domain string
		ins              []in
		attrs            []int64 // num_heads-style attributes, by op
		fault            string  // "" = accepted
	}{
		{"flash ok gqa+mask", "FlashAttention", "attnopt", []in{{"q", []any{1, 8, 16, 4}, f32}, {"k", []any{1, 2, 12, 4}, f32}, {"v", []any{1, 2, 12, 6}, f32}, {"m", []any{1, 1, 16, 12}, graph.Bool}}, nil, ""},
		{"flash head size", "FlashAttention", "attnopt", []in{{"q", []any{1, 8, 16, 4}, f32}, {"k", []any{1, 8, 12, 5}, f32}, {"v", []any{1, 8, 12, 6}, f32}}, nil, `K "k" 5`},
		{"flash groups", "FlashAttention", "attnopt", []in{{"q", []any{1, 8, 16, 4}, f32}, {"k", []any{1, 3, 12, 4}, f32}, {"v", []any{1, 3, 12, 4}, f32}}, nil, "not a multiple"},
		{"flash kv lengths", "FlashAttention", "attnopt", []in{{"q", []any{1, 2, 16, 4}, f32}, {"k", []any{1, 2, 12, 4}, f32}, {"v", []any{1, 2, 10, 4}, f32}}, nil, `V "v" has 10`},
		{"flash mask", "FlashAttention", "attnopt", []in{{"q", []any{1, 2, 16, 4}, f32}, {"k", []any{1, 2, 12, 4}, f32}, {"v", []any{1, 2, 12, 4}, f32}, {"m", []any{1, 1, 16, 11}, graph.Bool}}, nil, `mask "m"`},
		{"flash dtype", "FlashAttention", "attnopt", []in{{"q", []any{1, 2, 16, 4}, f32}, {"k", []any{1, 2, 12, 4}, graph.Float16}, {"v", []any{1, 2, 12, 4}, f32}}, nil, `"k" is float16`},
		{"mha ok", "MultiHeadAttention", "com.microsoft", []in{{"q", []any{2, 16, 32}, f32}, {"k", []any{2, 12, 32}, f32}, {"v", []any{2, 12, 32}, f32}, {"", nil, 0}, {"", nil, 0}, {"b", []any{2, 1, 16, 12}, f32}}, []int64{4}, ""},
		{"mha bias query axis", "MultiHeadAttention", "com.microsoft", []in{{"q", []any{2, 16, 32}, f32}, {"k", []any{2, 12, 32}, f32}, {"v", []any{2, 12, 32}, f32}, {"", nil, 0}, {"", nil, 0}, {"b", []any{2, 1, 1, 12}, f32}}, []int64{4}, `attention_bias "b"`},
		{"mha heads", "MultiHeadAttention", "com.microsoft", []in{{"q", []any{2, 16, 30}, f32}, {"k", []any{2, 12, 30}, f32}, {"v", []any{2, 12, 30}, f32}}, []int64{4}, "do not split"},
		{"onnx rank3 ok", "Attention", "", []in{{"q", []any{1, 16, 32}, f32}, {"k", []any{1, 12, 16}, f32}, {"v", []any{1, 12, 16}, f32}}, []int64{4, 2}, ""},
		{"onnx mask", "Attention", "", []in{{"q", []any{1, 2, 16, 4}, f32}, {"k", []any{1, 2, 12, 4}, f32}, {"v", []any{1, 2, 12, 4}, f32}, {"m", []any{16, 13}, f32}}, nil, `mask "m"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testgraph.New(23)
			if tc.domain != "" {
				b.Import(tc.domain, 1)
			}
			var names []string
			for _, x := range tc.ins {
				if x.name != "" {
					b.Input(x.name, x.dt, x.dims...)
				}
				names = append(names, x.name)
			}
			var at []*onnxpb.AttributeProto
			switch {
			case tc.op == "MultiHeadAttention":
				at = append(at, testgraph.Int("num_heads", tc.attrs[0]))
			case tc.attrs != nil:
				at = append(at, testgraph.Int("q_num_heads", tc.attrs[0]), testgraph.Int("kv_num_heads", tc.attrs[1]))
			}
			out := b.NodeN(tc.op, tc.domain, names, 1, at...)[0]
			b.Output(out)
			err := schema.CheckFusedOps(b.Model().Graph)
			switch {
			case tc.fault == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.fault != "" && (err == nil || !strings.Contains(err.Error(), tc.fault)):
				t.Fatalf("error %v, want one naming %s", err, tc.fault)
			}
		})
	}
}
