package passes_test

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
)

// A lifted ONNX Attention gets the matcher's causal and GQA rules, as dynamo
// writes them at opset 23: a causal attn_mask (aranges compared) becomes
// causal=1 and leaves only its padding term, an all-true mask is dropped,
// and K/V repeated to every query head are read at their Hkv heads unless
// present outputs need the repeated tensors. Numbers checked in the Go
// runtime for each target that takes the site.
func TestLiftedAttentionCausalAndGQA(t *testing.T) {
	const bsz, h, hkv, n, d = 2, 4, 2, 8, 8
	for _, c := range []struct {
		name       string
		mask       string // causal, causal_pad, all_true, none
		present    bool   // present_key read: the repeat must stay
		wantCausal bool
		wantMasks  int
		wantKV     int64
	}{
		{"causal aranges", "causal", false, true, 0, hkv},
		{"causal and padding", "causal_pad", false, true, 1, hkv},
		{"all-true mask", "all_true", false, false, 0, hkv},
		{"repeat kept for present", "none", true, false, 0, h},
	} {
		build := func() *graph.Model {
			b := testgraph.New(23)
			q := b.Input("q", graph.Float32, bsz, h, n, d)
			rep := func(name string) string {
				x := b.Input(name, graph.Float32, bsz, hkv, n, d)
				u := b.Node("Unsqueeze", []string{x, b.I64(2)})
				e := b.Node("Expand", []string{u, b.I64(bsz, hkv, h/hkv, n, d)})
				return b.Node("Reshape", []string{e, b.I64(bsz, h, n, d)})
			}
			k, v := rep("k"), rep("v")
			ins := []string{q, k, v}
			ar := func() string {
				return b.Node("Range", []string{b.Const(graph.Int64, nil, 0), b.Const(graph.Int64, nil, n), b.Const(graph.Int64, nil, 1)})
			}
			tril := func() string {
				return b.Node("LessOrEqual", []string{ar(), b.Node("Unsqueeze", []string{ar(), b.I64(1)})})
			}
			switch c.mask {
			case "causal":
				ins = append(ins, tril())
			case "causal_pad":
				ins = append(ins, b.Node("And", []string{tril(), b.Input("keep", graph.Bool, bsz, 1, 1, n)}))
			case "all_true":
				ins = append(ins, b.Node("Expand", []string{b.Const(graph.Bool, nil, 1), b.I64(bsz, 1, n, n)}))
			}
			outs := b.NodeN("Attention", "", ins, 3)
			b.Output(outs[0])
			if c.present {
				b.Output(outs[1])
			}
			return b.Model()
		}
		t.Run(c.name, func(t *testing.T) {
			res := FindSites(build().Graph)
			if len(res.Sites) != 1 {
				t.Fatalf("%d sites, %d rejected", len(res.Sites), len(res.Rejected))
			}
			s := res.Sites[0]
			if kv, _ := s.KVHeads.Value(); s.Causal != c.wantCausal || len(s.Masks) != c.wantMasks || kv != c.wantKV {
				t.Fatalf("%s: causal %v, %d mask terms, kv_heads %s; want %v, %d, %d", s.Variant, s.Causal, len(s.Masks), s.KVHeads, c.wantCausal, c.wantMasks, c.wantKV)
			}
			for _, target := range TargetNames() {
				orig, m := build(), build()
				rc, err := Rewrite(m, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatalf("%s: %v", target, err)
				}
				if rc.FusedCount() == 0 {
					if target == "attnopt" || target == "ort" {
						t.Fatalf("%s did not fuse: %s", target, rc.Actions[0].Reason)
					}
					continue // gqa: not a plain causal prompt; onnx: already its op
				}
				compareModels(t, orig, m, 5)
			}
		})
	}
}
