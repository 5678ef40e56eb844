package validate

import (
	"math"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// scoresWith builds softmax(q·kᵀ + bias(b))·v over 8 keys, bias made from
// the model's other inputs by build.
func scoresWith(build func(b *testgraph.B) (bias string, where bool)) *graph.Model {
	b := testgraph.New(17)
	q := b.Input("q", graph.Float32, 2, 2, 8, 4)
	k := b.Input("k", graph.Float32, 2, 2, 8, 4)
	v := b.Input("v", graph.Float32, 2, 2, 8, 4)
	s := b.Node("MatMul", []string{q, b.Node("Transpose", []string{k}, testgraph.Ints("perm", 0, 1, 3, 2))})
	bias, where := build(b)
	if where {
		s = b.Node("Where", []string{bias, s, b.Scalar(math.Inf(-1))})
	} else {
		s = b.Node("Add", []string{s, bias})
	}
	p := b.Node("Softmax", []string{s}, testgraph.Int("axis", -1))
	out := b.Node("MatMul", []string{p, v})
	b.Output(out)
	return b.Model()
}

// Roles come from what the graph does with an input, never its name: the
// misleading names below are on purpose.
func TestInputRolesFromGraphUse(t *testing.T) {
	cases := []struct {
		name  string
		m     *graph.Model
		input string
		want  inputRole
	}{
		{"token ids index an embedding table of 50 rows", func() *graph.Model {
			b := testgraph.New(17)
			ids := b.Input("attention_mask", graph.Int64, 1, 8)
			b.Output(b.Node("Gather", []string{b.Weight(graph.Float32, 50, 4), ids}))
			return b.Model()
		}(), "attention_mask", inputRole{kind: roleIndex, bound: 50}},
		{"position ids through Unsqueeze and Cast index a table on axis 1", func() *graph.Model {
			b := testgraph.New(17)
			pos := b.Input("mask", graph.Int32, 8)
			u := b.Node("Cast", []string{b.Node("Unsqueeze", []string{pos, b.I64(0)})}, testgraph.Int("to", int64(graph.Int64)))
			b.Output(b.Node("Gather", []string{b.Weight(graph.Float32, 4, 12), u}, testgraph.Int("axis", 1)))
			return b.Model()
		}(), "mask", inputRole{kind: roleIndex, bound: 12}},
		{"an int mask cast to float, (1 - m)·-10000, added to the scores", scoresWith(func(b *testgraph.B) (string, bool) {
			m := b.Input("input_ids", graph.Int64, 2, 8)
			f := b.Node("Cast", []string{b.Node("Unsqueeze", []string{m, b.I64(1, 2)})}, testgraph.Int("to", int64(graph.Float32)))
			return b.Node("Mul", []string{b.Node("Sub", []string{b.Scalar(1), f}), b.Scalar(-10000)}), false
		}), "input_ids", inputRole{kind: roleMask}},
		{"a float mask added to the scores takes finfo.min", scoresWith(func(b *testgraph.B) (string, bool) {
			return b.Input("hidden", graph.Float32, 2, 1, 1, 8), false
		}), "hidden", inputRole{kind: roleMask, fill: -math.MaxFloat32}},
		{"a bool mask in Where(m, s, -inf)", scoresWith(func(b *testgraph.B) (string, bool) {
			return b.Input("ids", graph.Bool, 1, 1, 8, 8), true
		}), "ids", inputRole{kind: roleMask}},
		{"a length compared with Range(0, 8)", scoresWith(func(b *testgraph.B) (string, bool) {
			n := b.Input("x", graph.Int64, 2, 1, 1, 1)
			r := b.Node("Range", []string{b.ScalarI64(0), b.ScalarI64(8), b.ScalarI64(1)})
			return b.Node("Less", []string{r, n}), true
		}), "x", inputRole{kind: roleLength, bound: 8}},
		{"an int cast to bool that reaches no site", func() *graph.Model {
			b := testgraph.New(17)
			m := b.Input("q", graph.Int64, 2, 8)
			b.Output(b.Node("Cast", []string{m}, testgraph.Int("to", int64(graph.Bool))))
			return b.Model()
		}(), "q", inputRole{kind: roleMask}},
		{"an integer nobody tests: data", func() *graph.Model {
			b := testgraph.New(17)
			m := b.Input("attention_mask", graph.Int64, 2, 8)
			b.Output(b.Node("Add", []string{m, b.ScalarI64(1)}))
			return b.Model()
		}(), "attention_mask", inputRole{kind: roleData}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := inputRoles(c.m, nil, nil)[c.input]
			if got != c.want {
				t.Fatalf("role %+v, want %+v", got, c.want)
			}
		})
	}
}

// An additive mask cut from its producer (site scope extracts the site at
// the mask value) takes the fill the full model writes: dynamo's
// Where(mask, 0, -3.4e38), an HF (1 - m)·-10000.
func TestFillFromTheSourceModel(t *testing.T) {
	for _, fill := range []float64{-3.4028234663852886e38, -10000} {
		b := testgraph.New(17)
		m := b.Input("m", graph.Bool, 1, 1, 8, 8)
		bias := b.Node("Where", []string{m, b.Scalar(0), b.Scalar(fill)})
		b.Output(bias)
		src := b.Model()
		if got, ok := fillOf(src, bias); !ok || float32(got) != float32(fill) {
			t.Errorf("fill %g: got %g, %v", fill, got, ok)
		}
	}
}
