package passes

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// The three cases of docs/design.md §1, built at their real sizes.
func TestSeedCasesAtRealSize(t *testing.T) {
	cases := []struct {
		name                        string
		build                       *testgraph.B
		heads, qlen, kvlen, hd, vhd int64
		scale                       float64
		dtype                       graph.DType
		mask                        MaskKind
		maskShape                   string
		scoreBytes                  int64
	}{
		{"CPA3D", testgraph.CPA3D(17, 128, 128, 128, 128, 4), 4, 2097152, 2097152, 32, 32, 1 / 5.656854249492381, graph.Float32, MaskNone, "", 70368744177664},
		{"SAGAN", testgraph.SAGAN(17, 64, 256, 256), 1, 65536, 65536, 8, 64, 1, graph.Float32, MaskNone, "", 17179869184},
		{"SDPA-bool-mask", testgraph.SDPABoolMask(17, graph.Float16, 1, 16, 10000, 4), 16, 10000, 10000, 4, 4, 0.5, graph.Float16, MaskBool, "[1,1,10000,10000]", 3200000000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := FindSites(tc.build.Model().Graph)
			if len(res.Sites) != 1 {
				for _, r := range res.Rejected {
					t.Log(r.Error())
				}
				t.Fatalf("found %d sites, want 1", len(res.Sites))
			}
			s := res.Sites[0]
			check := func(what string, got graph.Dim, want int64) {
				if v, ok := got.Value(); !ok || v != want {
					t.Errorf("%s = %s, want %d", what, got, want)
				}
			}
			check("heads", s.Heads, tc.heads)
			check("q_len", s.QLen, tc.qlen)
			check("kv_len", s.KVLen, tc.kvlen)
			check("head_dim", s.HeadDim, tc.hd)
			check("v_head_dim", s.VHeadDim, tc.vhd)
			// fp16 models store √scale rounded to fp16, so the product is close, not equal.
			if d := s.Scale - tc.scale; d > 1e-3 || d < -1e-3 {
				t.Errorf("scale = %v, want %v", s.Scale, tc.scale)
			}
			if s.DType != tc.dtype {
				t.Errorf("dtype = %s, want %s", s.DType, tc.dtype)
			}
			if s.Mask() != tc.mask {
				t.Errorf("mask = %s, want %s", s.Mask(), tc.mask)
			}
			if tc.maskShape != "" && s.MaskValue().Type.Shape.String() != tc.maskShape {
				t.Errorf("mask shape = %s, want %s", s.MaskValue().Type.Shape, tc.maskShape)
			}
			if sb, ok := s.ScoreBytes(); !ok || sb != tc.scoreBytes {
				t.Errorf("score_bytes = %d (%v), want %d", sb, ok, tc.scoreBytes)
			}
		})
	}
}
