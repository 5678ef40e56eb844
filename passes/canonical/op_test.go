package canonical

import (
	"math"
	"reflect"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/match/masks"
)

// TestOpRoundTrip: what stage 1 writes (Flash, EmitSDPA, EmitWindowed) is
// what a target reads back (Of): the site's scale, softcap, band and rows,
// through the table's writers and readers; and the node carries only the
// attributes the table writes for those values, in the table's order.
func TestOpRoundTrip(t *testing.T) {
	inf := math.Inf(-1)
	cases := []struct {
		name    string
		scale   float64
		softcap float64
		causal  bool
		window  int64
		rows    masks.Rows
		want    []string // attribute names on the node, in order
	}{
		{"plain", 0.125, 0, false, 0, masks.Rows{}, []string{"scale", "causal", "site"}},
		{"causal window softcap", 0.5, 30, true, 4, masks.Rows{}, []string{"scale", "causal", "sliding_window", "softcap", "site"}},
		{"window without causal is dropped", 0.5, 0, false, 4, masks.Rows{}, []string{"scale", "causal", "site"}},
		{"guarded", 1, 0, false, 0, masks.Rows{Guarded: true}, []string{"scale", "causal", "zero_rows", "site"}},
		{"literal -inf fills", 1, 0, true, 0, masks.Rows{Empty: masks.EmptyLiteral, MaskFill: inf, CausalFill: inf},
			[]string{"scale", "causal", "empty_rows", "site"}},
		{"literal finite fills", 1, 0, true, 0,
			masks.Rows{Empty: masks.EmptyLiteralZero, MaskFill: -1e4, CausalFill: -65504, Once: true, Round: true, MaskFloor: -5e5, Guarded: true},
			[]string{"scale", "causal", "empty_rows", "mask_fill", "causal_fill", "fill_once", "fill_round", "mask_floor", "zero_rows", "site"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, q := fourInputs(t)
			out := EmitSDPA(emit.New(g, "t"), 7, q[0], q[1], q[2], nil, Flash(&match.Match{Scale: tc.scale, Softcap: tc.softcap, Causal: tc.causal, SlidingWindow: tc.window}, tc.rows), tc.rows.Guarded)
			n := out.Producer()
			if got := attrNames(n); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("attributes %v, want %v", got, tc.want)
			}
			o, err := Of(n)
			if err != nil {
				t.Fatal(err)
			}
			wantWindow := tc.window
			if !tc.causal {
				wantWindow = 0
			}
			if o.Site != 7 || o.Scale() != float64(float32(tc.scale)) || float64(o.Attrs.Softcap) != tc.softcap ||
				o.Attrs.Causal != tc.causal || o.Attrs.SlidingWindow != wantWindow || o.Windowed != nil {
				t.Errorf("read back site %d scale %g softcap %g causal %v window %d", o.Site, o.Scale(), o.Attrs.Softcap, o.Attrs.Causal, o.Attrs.SlidingWindow)
			}
			want := tc.rows
			if !want.Literal() {
				want = masks.Rows{MaskFill: inf, CausalFill: inf, Guarded: want.Guarded}
			}
			if got := o.Rows(); got != want {
				t.Errorf("rows %+v, want %+v", got, want)
			}
		})
	}
	t.Run("window plan", func(t *testing.T) {
		for _, shift := range [][]int64{{0, 0}, {1, 1}} {
			g, q := fourInputs(t)
			w := opdef.WindowAttentionAttrs{Scale: 0.25, SpatialShape: []int64{2, 2}, Window: []int64{1, 2}, Shift: shift}
			o, err := Of(EmitWindowed(emit.New(g, "t"), 3, q[0], q[1], q[2], w).Producer())
			if err != nil {
				t.Fatal(err)
			}
			if o.Site != 3 || o.Windowed == nil || !reflect.DeepEqual(*o.Windowed, w) || o.Scale() != 0.25 {
				t.Errorf("shift %v: read back %+v (site %d)", shift, o.Windowed, o.Site)
			}
			names := attrNames(o.Node)
			if hasShift := names[len(names)-2] == "shift"; hasShift != (shift[0] != 0) {
				t.Errorf("shift %v: attributes %v (shift is written only when set)", shift, names)
			}
		}
	})
}

// fourInputs is a graph with Q, K, V of (1, 1, 4, 4).
func fourInputs(t *testing.T) (*graph.Graph, [3]*graph.Value) {
	t.Helper()
	bl := testgraph.New(17)
	var q [3]string
	for i, name := range []string{"q", "k", "v"} {
		q[i] = bl.Input(name, graph.Float32, 1, 1, 4, 4)
	}
	bl.Output(q[0])
	g := bl.Model().Graph
	return g, [3]*graph.Value{g.Value(q[0]), g.Value(q[1]), g.Value(q[2])}
}

func attrNames(n *graph.Node) []string {
	var out []string
	for _, a := range n.Attrs {
		out = append(out, a.Name)
	}
	return out
}
