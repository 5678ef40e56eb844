package opdef

import (
	"reflect"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// TestTypedValuesRoundTrip: the typed values (attrs_gen.go) written by
// Op.Write read back equal through Op.Read, field for field; defaults
// write only what the table always writes; and every field is off its
// default in the full case, so a row the typed struct drops shows here.
func TestTypedValuesRoundTrip(t *testing.T) {
	flash := FlashAttentionAttrs{Scale: 0.125, Causal: true, SlidingWindow: 7, EmptyRows: 2, MaskFill: -1e4,
		CausalFill: -65504, FillOnce: true, FillRound: true, Softcap: 30, MaskFloor: -5e5}
	window := WindowAttentionAttrs{Scale: 0.5, SpatialShape: []int64{4, 6}, Window: []int64{2, 3}, Shift: []int64{1, 2}}
	cases := []struct {
		op          *Op
		full, dflt  any
		attrs       func(any) []*graph.Attr
		read        func(*graph.Node) (any, error)
		defaultsOut []string
	}{
		{FlashAttention, flash, NewFlashAttentionAttrs(),
			func(a any) []*graph.Attr { return a.(FlashAttentionAttrs).Attrs() },
			func(n *graph.Node) (any, error) { return ReadFlashAttention(n) },
			[]string{AttrScale, AttrCausal}},
		{WindowAttention, window, WindowAttentionAttrs{Scale: 1, SpatialShape: []int64{2}, Window: []int64{2}, Shift: []int64{0}},
			func(a any) []*graph.Attr { return a.(WindowAttentionAttrs).Attrs() },
			func(n *graph.Node) (any, error) { return ReadWindowAttention(n) },
			[]string{AttrScale, AttrSpatialShape, AttrWindow}},
	}
	for _, tc := range cases {
		t.Run(tc.op.Name, func(t *testing.T) {
			written := tc.attrs(tc.full)
			if len(written) != len(tc.op.Attrs) {
				t.Errorf("the full case writes %d attributes, the table has %d rows", len(written), len(tc.op.Attrs))
			}
			for i, a := range written {
				if i < len(tc.op.Attrs) && a.Name != tc.op.Attrs[i].Name {
					t.Errorf("attribute %d is %s, the table's row %d is %s", i, a.Name, i, tc.op.Attrs[i].Name)
				}
			}
			got, err := tc.read(node(tc.op, written))
			if err != nil || !reflect.DeepEqual(got, tc.full) {
				t.Errorf("read back %+v, %v; want %+v", got, err, tc.full)
			}
			var names []string
			for _, a := range tc.attrs(tc.dflt) {
				names = append(names, a.Name)
			}
			if !reflect.DeepEqual(names, tc.defaultsOut) {
				t.Errorf("defaults write %v, want %v (required and always-written rows)", names, tc.defaultsOut)
			}
		})
	}
}
