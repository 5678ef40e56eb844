package passes

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// Each causal construction of issue 25 (internal/testgraph/causal.go) is one
// causal site whose mask terms are per key, never (Nq, Nk): causal, the
// sliding window and ALiBi's per-key row say the rest. Numbers: the same
// cases are in rewriteCases (TestRewriteGoldenAndNumbers, TestLiftOnlyMatchesOriginal).
func TestCausalConstructions(t *testing.T) {
	base := O{B: 2, H: 4, N: 16, D: 8}
	cases := []struct {
		mask   string
		dt     graph.DType
		window int64
		terms  int
		kind   MaskKind
	}{
		{"causal_cast_where", graph.Float32, 0, 1, MaskBool},
		{"causal_band_pad", graph.Float32, 4, 1, MaskBool},
		{"causal_fp16_pad", graph.Float16, 0, 1, MaskBool},
		{"alibi_const_pad", graph.Float32, 0, 2, MaskAdditive},
		{"alibi_row_pad", graph.Float32, 0, 2, MaskAdditive},
	}
	for _, c := range cases {
		t.Run(c.mask, func(t *testing.T) {
			o := base
			o.Mask, o.DType = c.mask, c.dt
			res := FindSites(testgraph.Attention(o).Model().Graph)
			if len(res.Sites) != 1 {
				t.Fatalf("%d sites, want 1 (rejected: %v)", len(res.Sites), res.Rejected)
			}
			s := res.Sites[0]
			if !s.Causal || s.SlidingWindow != c.window || len(s.Masks) != c.terms || s.Mask() != c.kind {
				t.Fatalf("causal %v, window %d, %d terms (%s); want causal, window %d, %d terms (%s)", s.Causal, s.SlidingWindow, len(s.Masks), s.Mask(), c.window, c.terms, c.kind)
			}
			for _, m := range s.Masks {
				sh := m.Shape().Shape
				if r := len(sh); r < 2 || !isOne(sh[r-2]) {
					t.Errorf("mask term %q reads as %s: not per key", m.Value.Name, m.Shape())
				}
			}
		})
	}
}
