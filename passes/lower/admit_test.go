package lower

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// TestAdmitRefusesUnloweredAttributes: a canonical op that sets a
// FlashAttention attribute a target's Lowers does not name is refused
// with that name (CodeTarget), so an attribute the table gains is never
// dropped by a target not taught it; one every target lowers passes. The
// op is a plain causal prompt every stock target otherwise accepts.
func TestAdmitRefusesUnloweredAttributes(t *testing.T) {
	base := func() opdef.FlashAttentionAttrs {
		a := opdef.NewFlashAttentionAttrs()
		a.Scale, a.Causal = 0.5, true
		return a
	}
	fillRound := base()
	fillRound.EmptyRows, fillRound.FillRound = 1, true
	cases := []struct {
		name    string
		attrs   opdef.FlashAttentionAttrs
		refused map[string]string // target → the attribute named
	}{
		{"plain causal", base(), nil},
		{"row attributes", fillRound, map[string]string{"gqa": opdef.AttrEmptyRows}},
	}
	for _, tc := range cases {
		for _, name := range TargetNames() {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				tgt, _ := TargetByName(name)
				err := Admit(tgt, canonicalOp(t, tc.attrs))
				want, refused := tc.refused[name]
				var r *match.Reject
				switch {
				case !refused && err != nil:
					t.Fatalf("refused: %v", err)
				case refused && (!errors.As(err, &r) || r.Code != match.CodeTarget || !strings.Contains(r.Reason, want)):
					t.Fatalf("err %v, want a target refusal naming %s", err, want)
				}
			})
		}
	}
}

// TestLowersNamesTableRows: every name a target lowers is a row of the
// table, and attnopt lowers them all.
func TestLowersNamesTableRows(t *testing.T) {
	for _, name := range TargetNames() {
		tgt, _ := TargetByName(name)
		for _, a := range tgt.Lowers() {
			if opdef.FlashAttention.Attr(a) == nil {
				t.Errorf("%s lowers %q, which FlashAttention's table has no row for", name, a)
			}
		}
	}
	a, _ := TargetByName("attnopt")
	for _, row := range opdef.FlashAttention.Attrs {
		if !slices.Contains(a.Lowers(), row.Name) {
			t.Errorf("attnopt does not lower %s", row.Name)
		}
	}
}

// canonicalOp is a canonical op over Q, K, V of (1, 2, 8, 16) float32.
func canonicalOp(t *testing.T, a opdef.FlashAttentionAttrs) *canonical.SDPA {
	t.Helper()
	bl := testgraph.New(23)
	var in [3]*graph.Value
	names := []string{bl.Input("q", graph.Float32, 1, 2, 8, 16), bl.Input("k", graph.Float32, 1, 2, 8, 16), bl.Input("v", graph.Float32, 1, 2, 8, 16)}
	bl.Output(names[0])
	g := bl.Model().Graph
	for i, n := range names {
		in[i] = g.Value(n)
	}
	out := canonical.EmitSDPA(emit.New(g, "t"), 0, in[0], in[1], in[2], nil, a, false)
	o, err := canonical.Of(out.Producer())
	if err != nil {
		t.Fatal(err)
	}
	return o
}
