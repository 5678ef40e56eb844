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

// paddingByGatherND reads attention_mask[b, kv_pos + 4] with GatherND
// (batch_dims 1), as HF's mask functions export a padding mask read at the
// cache's positions, and keeps the keys it marks.
func paddingByGatherND(b *testgraph.B) (string, bool) {
	m := b.Input("attention_mask", graph.Bool, 2, 8)
	pos := b.Input("kv_pos", graph.Int64, 2, 8)
	idx := b.Node("Unsqueeze", []string{b.Node("Add", []string{pos, b.ScalarI64(4)}), b.I64(-1)})
	keep := b.Node("GatherND", []string{m, idx}, testgraph.Int("batch_dims", 1))
	return b.Node("Unsqueeze", []string{keep, b.I64(1, 2)}), true
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
		{"ids through Unsqueeze index a GatherND table of 4 rows", func() *graph.Model {
			b := testgraph.New(17)
			ids := b.Input("ids", graph.Int64, 2, 8)
			b.Output(b.Node("GatherND", []string{b.Weight(graph.Float32, 4, 12), b.Node("Unsqueeze", []string{ids, b.I64(-1)})}))
			return b.Model()
		}(), "ids", inputRole{kind: roleIndex, bound: 4}},
		{"positions plus 4 read a padding mask of 8 keys through GatherND", scoresWith(paddingByGatherND), "kv_pos", inputRole{kind: roleIndex, bound: 4}},
		{"the mask GatherND reads is a mask", scoresWith(paddingByGatherND), "attention_mask", inputRole{kind: roleMask}},
		{"positions stacked with a batch index by Concat: the smaller axis bounds both", func() *graph.Model {
			b := testgraph.New(17)
			bi := b.Input("batch_idx", graph.Int64, 2, 8, 1)
			pos := b.Input("pos", graph.Int64, 2, 8, 1)
			idx := b.Node("Concat", []string{bi, pos}, testgraph.Int("axis", -1))
			b.Output(b.Node("GatherND", []string{b.Weight(graph.Float32, 2, 12), idx}))
			return b.Model()
		}(), "pos", inputRole{kind: roleIndex, bound: 2}},
		{"positions plus the cache's length (a Shape of past) read a table of past+seq rows", func() *graph.Model {
			b := testgraph.New(17)
			pos := b.Input("pos", graph.Int64, 2, "seq")
			past := b.Input("past_key", graph.Float32, 2, 2, "past", 4)
			plen := b.Node("Gather", []string{b.Node("Shape", []string{past}), b.ScalarI64(2)})
			idx := b.Node("Unsqueeze", []string{b.Node("Add", []string{pos, plen}), b.I64(-1)})
			b.Output(b.Node("GatherND", []string{b.Input("table", graph.Float32, "past+seq", 4), idx}))
			return b.Model()
		}(), "pos", inputRole{kind: roleIndex, bound: DefaultDim}}, // past+seq is 16 at the default dims, less past's 8
		{"an id minus 3 indexes a table of 5 rows", func() *graph.Model {
			b := testgraph.New(17)
			ids := b.Input("ids", graph.Int32, 6)
			d := b.Node("Cast", []string{b.Node("Sub", []string{ids, b.Const(graph.Int32, nil, 3)})}, testgraph.Int("to", int64(graph.Int64)))
			b.Output(b.Node("Gather", []string{b.Weight(graph.Float32, 5, 2), d}))
			return b.Model()
		}(), "ids", inputRole{kind: roleIndex, bound: 8}},
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

// Seeded inputs the graph accepts: positions read through GatherND at
// kv_pos + 4 stay in the table's 8 rows in every case (before, kv_pos drew
// from [0, 8) and the original failed at "GatherND index 8"), and the
// model compared with itself is exact.
func TestGatherNDPositionsStayInRange(t *testing.T) {
	for _, m := range []*graph.Model{testgraph.GatherNDPositions().Model(), scoresWith(paddingByGatherND)} {
		rep := Validate(m, m, GoRunner{}, Options{Scope: "model", Seed: 3})
		if rep.Verdict != Pass || len(rep.Checks) != 1 {
			t.Fatalf("%s: %+v", rep.Verdict, rep.Checks)
		}
		for _, o := range rep.Checks[0].Outputs {
			if o.MaxAbs != 0 {
				t.Errorf("%s: max abs %g comparing the model with itself", o.Output, o.MaxAbs)
			}
		}
		roles := inputRoles(m, nil, nil)
		for _, k := range append([]caseKind{caseRandom}, maskCases...) {
			in, err := genInputs(m, roles, k, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range in["kv_pos"].I {
				if x < 0 || x+4 >= 8 {
					t.Fatalf("%s: kv_pos %d reads row %d of 8", k, x, x+4)
				}
			}
		}
	}
}
