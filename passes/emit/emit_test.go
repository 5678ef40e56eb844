package emit_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/emit"
)

// TestBuildersPerOpset: every builder, in the node form each opset takes
// (axes as an attribute before Unsqueeze/Squeeze-13 and ReduceMax-18, as
// an input after), computes what it says in the Go runtime, and the type
// it inferred while emitting is the shape the runtime produced.
func TestBuildersPerOpset(t *testing.T) {
	xs := make([]float32, 2*3*4)
	for i := range xs {
		xs[i] = float32((i*7)%11) - 5
	}
	keep := []bool{true, false, true, true, false, false, true, false}
	cases := []struct {
		name   string
		build  func(e *emit.Emitter, x, m *graph.Value) *graph.Value
		shape  []int
		want   []float64     // nil: x's values in x's order
		inputs map[int64]int // opset → inputs of the last node (absent: not checked)
	}{
		{"unsqueeze", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value { return e.Unsqueeze(x, 0) },
			[]int{1, 2, 3, 4}, nil, map[int64]int{11: 1, 13: 2, 18: 2}},
		{"squeeze", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value { return e.Squeeze(e.Unsqueeze(x, 1), 1) },
			[]int{2, 3, 4}, nil, map[int64]int{11: 1, 13: 2, 18: 2}},
		{"shape slice", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value { return e.ShapeSlice(x, 1, 3) },
			[]int{2}, []float64{3, 4}, nil},
		{"positions", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value {
			return e.Positions(e.Squeeze(e.ShapeSlice(x, 2, 3), 0))
		}, []int{4}, []float64{0, 1, 2, 3}, nil},
		{"reshape", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value { return e.Reshape(x, 6, -1) },
			[]int{6, 4}, nil, nil},
		{"transpose", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value {
			return e.Reshape(e.Transpose(e.Transpose(x, 2, 0, 1), 1, 2, 0), 2, 3, 4)
		}, []int{2, 3, 4}, nil, nil},
		{"swap last 2", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value { return e.SwapLast2(e.SwapLast2(x)) },
			[]int{2, 3, 4}, nil, nil},
		{"bool to bias", func(e *emit.Emitter, _, m *graph.Value) *graph.Value {
			return e.BoolToBias(m, false, -5, graph.Float32)
		},
			[]int{2, 1, 1, 4}, []float64{0, -5, 0, 0, -5, -5, 0, -5}, nil},
		{"bool to bias inverted", func(e *emit.Emitter, _, m *graph.Value) *graph.Value {
			return e.BoolToBias(m, true, -5, graph.Float32)
		}, []int{2, 1, 1, 4}, []float64{-5, 0, -5, -5, 0, 0, -5, 0}, nil},
		{"reduce max last", func(e *emit.Emitter, x, _ *graph.Value) *graph.Value { return e.ReduceMaxLast(x) },
			[]int{2, 3, 1}, rowMax(xs, 4), map[int64]int{11: 1, 17: 1, 18: 2}},
	}
	for _, opset := range []int64{11, 13, 17, 18} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/opset%d", tc.name, opset), func(t *testing.T) {
				b := testgraph.New(opset)
				b.Input("x", graph.Float32, 2, 3, 4)
				b.Input("m", graph.Bool, 2, 1, 1, 4)
				b.Output("x")
				m := b.Model()
				g := m.Graph
				out := tc.build(emit.New(g, "t"), g.Value("x"), g.Value("m"))
				g.Outputs = []*graph.Value{out}
				if err := g.Sort(); err != nil {
					t.Fatal(err)
				}
				if n, ok := tc.inputs[opset]; ok && len(out.Producer().Inputs) != n {
					t.Errorf("%s has %d inputs at opset %d, want %d", out.Producer().OpType, len(out.Producer().Inputs), opset, n)
				}
				res, err := eval.Run(m, map[string]*eval.Tensor{"x": eval.FromFloats([]int{2, 3, 4}, xs),
					"m": eval.FromBools([]int{2, 1, 1, 4}, keep)}, eval.Options{})
				if err != nil {
					t.Fatal(err)
				}
				got := res[out.Name]
				if !reflect.DeepEqual(got.Shape, tc.shape) {
					t.Fatalf("shape %v, want %v", got.Shape, tc.shape)
				}
				if inferred, ran := out.Type.Shape.String(), strings.ReplaceAll(fmt.Sprint(tc.shape), " ", ","); inferred != ran {
					t.Errorf("inferred %s while emitting, ran %v", inferred, tc.shape)
				}
				want := tc.want
				if want == nil {
					want = make([]float64, len(xs))
					for i, v := range xs {
						want[i] = float64(v)
					}
				}
				if vals := got.Float64s(); !reflect.DeepEqual(vals, want) {
					t.Errorf("values %v, want %v", vals, want)
				}
			})
		}
	}
}

// rowMax is the maximum of each run of n values.
func rowMax(v []float32, n int) []float64 {
	var out []float64
	for i := 0; i < len(v); i += n {
		m := v[i]
		for _, x := range v[i : i+n] {
			m = max(m, x)
		}
		out = append(out, float64(m))
	}
	return out
}
