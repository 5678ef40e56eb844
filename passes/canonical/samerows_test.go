package canonical

import (
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/emit"
)

// TestRowOf: rowOf re-emits a mask that is the same in every query row on
// one row. Its value is row 0 of the original (both run in the Go
// runtime), and where the construction can be re-emitted (constants,
// elementwise ops, constant Expand and Reshape targets) no (Nq, Nk) plane is
// built for it.
func TestRowOf(t *testing.T) {
	const b, n = 2, 6
	ones := make([]float64, b*n)
	for i := range ones {
		ones[i] = 1
	}
	cases := []struct {
		name  string
		build func(bl *testgraph.B, pad string) string // the (B, 1, Nq, Nk) mask
		plane bool                                     // a plane may remain (the fallback Slice)
	}{
		{"jax make_attention_mask", func(bl *testgraph.B, pad string) string {
			rows := bl.Const(graph.Bool, []int64{b, n, 1}, ones...)
			cols := bl.Node("Reshape", []string{pad, bl.I64(b, 1, n)})
			return bl.Node("Reshape", []string{bl.Node("And", []string{rows, cols}), bl.I64(b, 1, n, n)})
		}, false},
		{"constant Expand", func(bl *testgraph.B, pad string) string {
			cols := bl.Node("Reshape", []string{pad, bl.I64(b, 1, 1, n)})
			return bl.Node("Not", []string{bl.Node("Expand", []string{bl.Node("Not", []string{cols}), bl.I64(b, 1, n, n)})})
		}, false},
		{"computed Expand: sliced", func(bl *testgraph.B, pad string) string {
			// the query length read from pad's shape at run time
			cols := bl.Node("Reshape", []string{pad, bl.I64(b, 1, 1, n)})
			shape := bl.Node("Concat", []string{bl.I64(b, 1), bl.Node("Slice", []string{bl.Node("Shape", []string{pad}), bl.I64(1), bl.I64(2)}), bl.I64(n)}, testgraph.Int("axis", 0))
			return bl.Node("Expand", []string{cols, shape})
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bl := testgraph.New(17)
			pad := bl.Input("pad", graph.Bool, b, n)
			v := tc.build(bl, pad)
			bl.Output(v)
			m := bl.Model()
			g := m.Graph
			row := rowOf(emit.New(g, "t"), g.Value(v), 1)
			g.Outputs = append(g.Outputs, row)
			if err := g.Sort(); err != nil {
				t.Fatal(err)
			}
			padT := eval.FromBools([]int{b, n}, []bool{true, true, true, true, false, false, true, true, true, true, true, true})
			out, err := eval.Run(m, map[string]*eval.Tensor{"pad": padT}, eval.Options{})
			if err != nil {
				t.Fatal(err)
			}
			full, got := out[v], out[row.Name]
			if len(got.Shape) != 4 || got.Shape[2] != 1 {
				t.Fatalf("row shape %v, want (…, 1, Nk)", got.Shape)
			}
			// Every element of the plane equals the row's element at its key.
			for i := range full.B {
				bb, j := i/(n*n), i%n
				k := j
				if got.Shape[0] > 1 {
					k += bb * n
				}
				if full.B[i] != got.B[k] {
					t.Fatalf("element %d: plane %v, row %v", i, full.B[i], got.B[k])
				}
			}
			if !tc.plane {
				for _, nd := range g.Nodes {
					if o := nd.Output(0); o != nil && o != g.Value(v) && nd.Name[:2] == "t/" && o.Type.Rank() == 4 && o.Type.Shape[2].Equal(graph.D(n)) {
						t.Errorf("%s builds a plane %s", nd.Name, o.Type)
					}
				}
			}
		})
	}
}
