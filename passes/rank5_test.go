package passes_test

import (
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// TestRank5Sites: Hiera-type sites whose Q, K, V are (B, H, W, N, D) fold
// their two leading axes into the fused op's batch (passes/canonical/
// stage1.go toRank4, foldMask) for every target that takes a mask-free or
// masked non-causal site, and the rewrite's numbers equal the original's
// in the Go runtime and, when found, ONNX Runtime. A mask that broadcasts
// over one leading axis only is expanded before the fold; K and V shared
// by the third axis read as grouped heads. The attnopt rewrites are goldens.
func TestRank5Sites(t *testing.T) {
	base := O{B: 2, H: 3, N: 16, D: 8, Rank: 5, Scale: "mul"}
	with := func(f func(*O)) O { o := base; f(&o); return o }
	cases := []struct {
		name       string
		opts       O
		batch      int64
		heads, hkv int64
		targets    []string
	}{
		{"hiera", with(func(o *O) { o.Scale = "qk" }), 6, 2, 2, []string{"attnopt", "ort"}},
		{"einsum", with(func(o *O) { o.Op = "Einsum" }), 6, 2, 2, []string{"attnopt", "ort"}},
		{"padding_add", with(func(o *O) { o.Mask = "add" }), 6, 2, 2, []string{"attnopt", "ort"}},
		{"bool_where", with(func(o *O) { o.Mask = "where" }), 6, 2, 2, []string{"attnopt", "ort"}},
		{"grouped", with(func(o *O) { o.KVHeads = 1 }), 6, 2, 1, []string{"attnopt", "ort"}},
		{"opset23", with(func(o *O) { o.Opset, o.Mask = 23, "where" }), 6, 2, 2, []string{"attnopt", "ort", "onnx"}},
	}
	runners, _, customOK := testRunners(t)
	for _, tc := range cases {
		orig := testgraph.Attention(tc.opts).Model()
		res := FindSites(orig.Graph)
		if len(res.Sites) != 1 {
			t.Fatalf("%s: %d sites (%v), want 1", tc.name, len(res.Sites), res.Rejected)
		}
		s := res.Sites[0]
		b, _ := s.Batch.Value()
		h, _ := s.Heads.Value()
		hkv, _ := s.KVHeads.Value()
		if s.Rank != 5 || b != tc.batch || h != tc.heads || hkv != tc.hkv {
			t.Errorf("%s: rank %d, batch %d, heads %d/%d; want 5, %d, %d/%d", tc.name, s.Rank, b, h, hkv, tc.batch, tc.heads, tc.hkv)
		}
		ins, err := validate.RandomInputs(orig, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eval.Run(orig, ins, eval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range tc.targets {
			t.Run(tc.name+"/"+target, func(t *testing.T) {
				m := testgraph.Attention(tc.opts).Model()
				c, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				if a := c.Actions[0]; !a.Fused {
					t.Fatalf("not fused: %s", a.Reason)
				}
				golden := ""
				if target == "attnopt" {
					golden = filepath.Join("..", "testdata", "golden", "rank5_"+tc.name+"_attnopt.txt")
				}
				checkRewriteNumbers(t, m, target, golden, ins, want, validate.Tolerance(graph.Float32), runners, customOK)
			})
		}
	}
}
