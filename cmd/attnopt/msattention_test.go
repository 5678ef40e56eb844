package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a user sees for com.microsoft.Attention (passes/match/fused_msattention.go):
// inspect lists a lifted op as a site with its form, --explain gives a
// refused one's reason, and rewrite --validate fuses a masked one and
// passes (exit 0) without touching the input.
func TestMSAttentionCLI(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "msattention")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", filepath.Join(dir, "mask_2d", "model.onnx")}, 0,
			"lifted from com.microsoft.Attention (rank3/scale-default/mask-additive)"},
		{[]string{"inspect", "--explain", filepath.Join(dir, "refused_unidirectional_mask", "model.onnx")}, 0,
			"not a site: com.microsoft.Attention (kept fused) attention: causal (unidirectional or a triangular attention_bias) with mask_index"},
		{[]string{"rewrite", filepath.Join(dir, "mask_1d_spans", "model.onnx"), "-o", filepath.Join(t.TempDir(), "out.onnx"), "--validate", "--min-scores", "0"}, 0,
			"fused into attnopt.FlashAttention"},
	} {
		in := c.args[1]
		if c.args[1] == "--explain" {
			in = c.args[2]
		}
		before, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stdout, c.want) {
			t.Errorf("attnopt %s: exit %d, want %d and %q:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, stdout, stderr)
		}
		if after, _ := os.ReadFile(in); string(after) != string(before) {
			t.Errorf("attnopt %s changed its input", strings.Join(c.args, " "))
		}
	}
}
