package passes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	. "github.com/attnopt/attnopt/passes"
)

// TestLiftMSAttention: each single-op com.microsoft.Attention fixture
// (testdata/export/export_msattention.py, outputs from ONNX Runtime 1.24.3's
// CPU kernel) is lifted with the variant given, or refused with the reason
// given. Every lifted one is rewritten with --target attnopt and --target
// ort, no com.microsoft.Attention is left, and the rewrite reproduces ONNX
// Runtime's stored output in the Go runtime and in ONNX Runtime; the
// original also runs in the Go runtime (what validate compares against).
func TestLiftMSAttention(t *testing.T) {
	runners, ortOK, customOK := testRunners(t)
	t.Logf("ONNX Runtime checked: %v, custom ops: %v", ortOK, customOK)
	for _, c := range []struct {
		name string
		want string // the variant, or the refusal's reason
	}{
		{"plain", "lifted:com.microsoft.Attention/rank3/scale-default"},
		{"unidirectional", "lifted:com.microsoft.Attention/rank3/scale-default/causal"},
		{"mask_2d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"mask_1d_lengths", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"mask_1d_spans", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"mask_3d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"empty_2d", "lifted:com.microsoft.Attention/rank3/scale-attr/mask-additive"},
		{"empty_1d_lengths", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"empty_1d_spans", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"empty_3d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"attention_bias", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"qkv_sizes", "lifted:com.microsoft.Attention/rank3/scale-default"},
		{"fp16_mask_2d", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"dynamic", "lifted:com.microsoft.Attention/rank3/scale-default/mask-additive"},
		{"refused_unidirectional_mask", "causal (unidirectional or a triangular attention_bias) with mask_index"},
		{"refused_past", "past state (a KV cache packed as (2, B, H, P, D)) is not lifted"},
	} {
		dir := filepath.Join("..", "testdata", "msattention", c.name)
		path := filepath.Join(dir, "model.onnx")
		m, err := graph.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		res := FindSites(m.Graph)
		if strings.HasPrefix(c.name, "refused_") {
			if len(res.Sites) != 0 || len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0].Reason, c.want) || res.Rejected[0].At == "" {
				t.Errorf("%s: %d sites, rejections %+v; want the refusal %q", c.name, len(res.Sites), res.Rejected, c.want)
			}
			continue
		}
		if len(res.Sites) != 1 || res.Sites[0].Variant != c.want {
			t.Errorf("%s: %d sites %+v (rejected %+v); want one %s", c.name, len(res.Sites), res.Sites, res.Rejected, c.want)
			continue
		}
		ins, want := loadDataSet(t, m, filepath.Join(dir, "test_data_set_0"))
		t.Run(c.name+"/original", func(t *testing.T) {
			checkStoredOutputs(t, m, m, ins, want, runners[:1], true)
		})
		for _, target := range []string{"attnopt", "ort"} {
			t.Run(c.name+"/"+target, func(t *testing.T) {
				rew, _ := graph.Load(path)
				rc, err := Rewrite(rew, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				if rc.FusedCount() != 1 {
					t.Fatalf("not fused: %s", rc.Actions[0].Reason)
				}
				for _, n := range rew.Graph.Nodes {
					if OpName(n) == "com.microsoft.Attention" {
						t.Fatal("com.microsoft.Attention left")
					}
				}
				data, _ := rew.Marshal()
				if rew, err = graph.LoadBytes(data, ""); err != nil {
					t.Fatal(err)
				}
				checkStoredOutputs(t, m, rew, ins, want, runners, target == "attnopt" && !customOK)
			})
		}
	}
}
