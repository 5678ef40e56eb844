package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// rewrite says once per model when fused sites lifted from ONNX Attention
// may have rows that see no key, naming the ONNX Runtime versions whose
// result on the original differs there (docs/fully-masked-rows.md); never
// for sites that always see a key, pattern-matched sites, or a rewrite that
// kept the Attention ops.
func TestRewriteNotesRowsAcrossRuntimes(t *testing.T) {
	const note = "note: 2 fused site(s) lifted from ONNX Attention may have rows that see no key (padding, a fully masked row): " +
		"the rewrite gives zeros there, as the ONNX spec, PyTorch and ONNX Runtime 1.31+ do on the original, " +
		"while ONNX Runtime 1.24–1.30 gives the mean of V on the original"
	cases := []struct {
		name, model string
		flags       []string
		want        string // "" for no note
	}{
		{"left-padded decoder, opset 23", "hf_qwen3_leftpad_dynamo_op23", nil, note},
		{"left-padded decoder, --target ort", "hf_qwen3_leftpad_dynamo_op23", []string{"--target", "ort"}, note},
		{"a fully masked row", "sdpa_dead_row_dynamo_op23", nil, "note: 1 fused site(s) lifted from ONNX Attention may have rows that see no key"},
		{"--target onnx keeps the op", "hf_qwen3_leftpad_dynamo_op23", []string{"--target", "onnx"}, ""},
		{"decode step without a mask", "kv_cache_dynamo_op23", nil, ""},
		{"the same decoder at opset 18", "hf_qwen3_leftpad_dynamo", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.onnx")
			args := append([]string{"rewrite", "../../testdata/models/" + tc.model + "/model.onnx", "-o", out, "--quiet", "--min-scores", "0"}, tc.flags...)
			code, stdout, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
			}
			n := strings.Count(stdout, "lifted from ONNX Attention may have rows that see no key")
			switch {
			case tc.want == "" && n != 0:
				t.Errorf("unexpected note:\n%s", stdout)
			case tc.want != "" && (n != 1 || !strings.Contains(stdout, tc.want) || !strings.Contains(stdout, "(docs/fully-masked-rows.md)")):
				t.Errorf("want the note once (%q), got %d in:\n%s", tc.want, n, stdout)
			}
		})
	}
}
