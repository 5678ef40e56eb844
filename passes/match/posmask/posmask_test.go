package posmask_test

import (
	"math"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

const n = 5 // the planes are n × n

// plane is a constant (1, 1, n, n) with keep(i, j) as 1/0, or, for a
// bias, 0/fill.
func plane(b *testgraph.B, keep func(i, j int) bool, bias bool, fill float64) string {
	vals := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case keep(i, j) && !bias:
				vals[i*n+j] = 1
			case !keep(i, j) && bias:
				vals[i*n+j] = fill
			}
		}
	}
	dt := graph.Bool
	if bias {
		dt = graph.Float32
	}
	return b.Const(dt, []int64{1, 1, n, n}, vals...)
}

// aranges are the query index as a column and the key index as a row, from
// Range over a dynamic length (no constant to read).
func aranges(b *testgraph.B) (rows, cols string) {
	x := b.Input("x", graph.Float32, "s", 8)
	s := b.Node("Squeeze", []string{b.Node("Slice", []string{b.Node("Shape", []string{x}), b.I64(0), b.I64(1)}), b.I64(0)})
	r := b.Node("Range", []string{b.ScalarI64(0), s, b.ScalarI64(1)})
	return b.Node("Unsqueeze", []string{r, b.I64(1)}), b.Node("Unsqueeze", []string{r, b.I64(0)})
}

// TestTriangles: each construction exporters write for a causal mask (and
// its complement) is read as the triangle j ≤ i + Off, Neg for the
// pattern of dropped keys, and a non-triangular plane is not.
func TestTriangles(t *testing.T) {
	inf := math.Inf(-1)
	cases := []struct {
		name  string
		build func(b *testgraph.B) string
		bias  bool // read with BiasTri (0 keeps), else BoolTri (nonzero keeps)
		want  posmask.Tri
		ok    bool
	}{
		{"constant tril", func(b *testgraph.B) string { return plane(b, func(i, j int) bool { return j <= i }, false, 0) }, false,
			posmask.Tri{Off: graph.D(0)}, true},
		{"constant tril offset 2", func(b *testgraph.B) string { return plane(b, func(i, j int) bool { return j <= i+2 }, false, 0) }, false,
			posmask.Tri{Off: graph.D(2)}, true},
		{"constant not triangular", func(b *testgraph.B) string { return plane(b, func(i, j int) bool { return (i+j)%2 == 0 }, false, 0) },
			false, posmask.Tri{}, false},
		{"Not of a tril", func(b *testgraph.B) string {
			return b.Node("Not", []string{plane(b, func(i, j int) bool { return j <= i }, false, 0)})
		}, false, posmask.Tri{Off: graph.D(0), Neg: true}, true},
		{"Trilu of ones, lower", func(b *testgraph.B) string {
			return b.Node("Trilu", []string{b.Const(graph.Float32, []int64{n, n}, ones(n*n)...)}, testgraph.Int("upper", 0))
		}, false, posmask.Tri{Off: graph.D(0)}, true},
		{"Trilu of ones, upper k=1 (the dropped keys)", func(b *testgraph.B) string {
			return b.Node("Trilu", []string{b.Const(graph.Float32, []int64{n, n}, ones(n*n)...), b.ScalarI64(1)})
		}, false, posmask.Tri{Off: graph.D(0), Neg: true}, true},
		{"aranges j <= i", func(b *testgraph.B) string {
			rows, cols := aranges(b)
			return b.Node("LessOrEqual", []string{cols, rows})
		}, false, posmask.Tri{Off: graph.D(0)}, true},
		{"aranges j < i", func(b *testgraph.B) string {
			rows, cols := aranges(b)
			return b.Node("Less", []string{cols, rows})
		}, false, posmask.Tri{Off: graph.D(-1)}, true},
		{"aranges i >= j (queries first)", func(b *testgraph.B) string {
			rows, cols := aranges(b)
			return b.Node("GreaterOrEqual", []string{rows, cols})
		}, false, posmask.Tri{Off: graph.D(0)}, true},
		{"aranges i < j (queries first)", func(b *testgraph.B) string {
			rows, cols := aranges(b)
			return b.Node("Less", []string{rows, cols})
		}, false, posmask.Tri{Off: graph.D(0), Neg: true}, true},
		{"bias 0 / -inf", func(b *testgraph.B) string { return plane(b, func(i, j int) bool { return j <= i }, true, inf) }, true,
			posmask.Tri{Off: graph.D(0)}, true},
		{"bias Where(tril, 0, -inf)", func(b *testgraph.B) string {
			return b.Node("Where", []string{plane(b, func(i, j int) bool { return j <= i }, false, 0), b.Scalar(0), b.Scalar(inf)})
		}, true, posmask.Tri{Off: graph.D(0)}, true},
		{"bias with a finite fill is not -inf", func(b *testgraph.B) string { return plane(b, func(i, j int) bool { return j <= i }, true, -1e4) },
			true, posmask.Tri{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testgraph.New(17)
			out := tc.build(b)
			b.Output(out)
			v := b.Model().Graph.Value(out)
			read := posmask.BoolTri
			if tc.bias {
				read = posmask.BiasTri
			}
			got, ok := read(v, 0)
			if ok != tc.ok || (ok && (!got.Off.Equal(tc.want.Off) || got.Neg != tc.want.Neg)) {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestLeafBand: a constant keeping i − w < j ≤ i (a causal sliding window
// in one constant) reads as the triangle and the band's lower edge; a plain
// triangle has no lower edge.
func TestLeafBand(t *testing.T) {
	for _, tc := range []struct {
		name        string
		keep        func(i, j int) bool
		causal, low int64
		ok          bool
	}{
		{"window 2", func(i, j int) bool { return j <= i && j > i-2 }, 0, -2, true},
		{"window 3", func(i, j int) bool { return j <= i && j > i-3 }, 0, -3, true},
		{"causal only", func(i, j int) bool { return j <= i }, 0, 0, false},
	} {
		for _, bias := range []bool{false, true} {
			b := testgraph.New(17)
			out := plane(b, tc.keep, bias, math.Inf(-1))
			b.Output(out)
			c, band, ok := posmask.LeafBand(b.Model().Graph.Value(out), bias, false)
			if ok != tc.ok || (ok && (!c.Off.Equal(graph.D(tc.causal)) || c.Neg || !band.Off.Equal(graph.D(tc.low)) || !band.Neg)) {
				t.Errorf("%s (bias %v): causal %+v band %+v ok %v", tc.name, bias, c, band, ok)
			}
		}
	}
}

// TestDropValues: what drops a key from a softmax in each type.
func TestDropValues(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		dt   graph.DType
		want bool
	}{
		{math.Inf(-1), graph.Float32, true}, {-3.4028234663852886e38, graph.Float32, true}, {-1e30, graph.Float32, true},
		{-1e4, graph.Float32, false}, {-65504, graph.Float16, true}, {-65504, graph.Float32, false}, {0, graph.Float16, false},
	} {
		if got := posmask.DropsKey(tc.x, tc.dt); got != tc.want {
			t.Errorf("DropsKey(%g, %s) = %v, want %v", tc.x, tc.dt, got, tc.want)
		}
	}
}

func ones(k int) []float64 {
	v := make([]float64, k)
	for i := range v {
		v[i] = 1
	}
	return v
}
