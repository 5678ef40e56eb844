package validate

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// TestSameShape: a site's output and its replacement pair up when their
// types and ranks agree and every dim both models know is equal; one model
// may know a length the other left unknown (ORT's gpt2_past: "?" in the
// original, a symbol in the rewrite), which made every site of that model
// an error ("cannot find what replaced").
func TestSameShape(t *testing.T) {
	f := func(dims ...graph.Dim) graph.Type { return graph.Type{DType: graph.Float32, Shape: dims, Ranked: true} }
	b, s := graph.Sym("batch_size"), graph.Sym("seq_len")
	cases := []struct {
		name string
		a, b graph.Type
		want bool
	}{
		{"equal", f(b, graph.D(2), s, graph.D(2)), f(b, graph.D(2), s, graph.D(2)), true},
		{"unknown beside a symbol", f(b, graph.D(2), graph.UnknownDim, graph.D(2)), f(b, graph.D(2), s, graph.D(2)), true},
		{"a folded transpose", f(graph.D(2), graph.D(8), graph.D(4), graph.D(2)), f(graph.D(2), graph.D(4), graph.D(8), graph.D(2)), false},
		{"rank", f(graph.D(2), graph.D(8)), f(graph.D(2), graph.D(8), graph.D(1)), false},
		{"dtype", f(graph.D(2)), graph.Type{DType: graph.Float16, Shape: graph.Shape{graph.D(2)}, Ranked: true}, false},
		{"unranked", f(graph.D(2)), graph.Type{DType: graph.Float32}, false},
	}
	for _, tc := range cases {
		if got := sameShape(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: sameShape(%s, %s) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}
