package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rewrite --min-scores: sites whose known score tensor is smaller are left
// as they were, each with its reason, and the written model keeps their
// Softmax; the default is 16 KiB; sites of unknown size are fused.
func TestRewriteMinScores(t *testing.T) {
	vit := "../../testdata/models/timm_vit/model.onnx"            // 2 sites, scores 4.5 KiB each
	dynamic := "../../testdata/models/hf_bert_dynamic/model.onnx" // symbolic batch and sequence
	cases := []struct {
		name    string
		model   string
		flags   []string
		code    int
		want    []string
		softmax bool // the written model still holds a Softmax node
	}{
		{"default leaves 4.5 KiB sites", vit, nil, 0, []string{
			"site 0 (/blocks/blocks.0/attn/Softmax): left as is: scores 4.5 KiB are below --min-scores 16.0 KiB: too small to gain from fusing",
			"site 1 (/blocks/blocks.1/attn/Softmax): left as is: scores 4.5 KiB are below --min-scores 16.0 KiB",
			"0 of 2 site(s) fused"}, true},
		{"0 fuses every site (numbers validated)", vit, []string{"--min-scores", "0", "--validate"}, 0, []string{"2 of 2 site(s) fused", "PASS"}, false},
		{"below the scores fuses", vit, []string{"--min-scores", "4KiB", "--target", "ort"}, 0, []string{"2 of 2 site(s) fused (target ort)"}, false},
		{"unknown sizes are fused", dynamic, []string{"--min-scores", "1GiB"}, 0, []string{"site(s) fused", "fused into attnopt.FlashAttention"}, false},
		{"bad size", vit, []string{"--min-scores", "lots"}, 2, nil, false},
		{"negative size", vit, []string{"--min-scores", "-1"}, 2, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.model)
			out := filepath.Join(t.TempDir(), "out.onnx")
			code, stdout, stderr := runCLI(append([]string{"rewrite", tc.model, "-o", out, "--quiet"}, tc.flags...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s%s", code, tc.code, stdout, stderr)
			}
			if after, _ := os.ReadFile(tc.model); !bytes.Equal(before, after) {
				t.Fatal("the input changed")
			}
			if tc.code != 0 {
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if len(lines) != 1 || !strings.Contains(stderr, "--min-scores") {
					t.Fatalf("want one line naming --min-scores, got:\n%s", stderr)
				}
				if _, err := os.Stat(out); err == nil {
					t.Fatal("an output was written for a bad flag")
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("missing %q in:\n%s", w, stdout)
				}
			}
			m, err := loadModel(out, &pinFlags{}, newProgress(nil, true, false))
			if err != nil {
				t.Fatal(err)
			}
			softmax := false
			for _, n := range m.Graph.Nodes {
				softmax = softmax || n.OpType == "Softmax"
			}
			if softmax != tc.softmax {
				t.Errorf("written model holds a Softmax: %v, want %v", softmax, tc.softmax)
			}
		})
	}
}
