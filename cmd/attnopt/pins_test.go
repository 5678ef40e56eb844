package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// check gates a dynamic export once its inputs are pinned: the sites are
// found (none were, pinned, before value_info survived pinning), their
// memory is concrete, and a budget below it fails; pins that contradict
// each other exit 2 with one line naming the file.
func TestCheckPinnedDynamicExport(t *testing.T) {
	model := filepath.Join("..", "..", "testdata", "models", "hf_gpt2_dynamic_dynamo", "model.onnx")
	pins := []string{"--shape", "input_ids=2x16", "--shape", "attention_mask=2x16"}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines that must appear
		stderr string
	}{
		{"fits", append([]string{"check", model, "--memory-budget", "1MiB"}, pins...), 0,
			[]string{"2 unfused attention site(s)", "node_softmax\t2\t4\t16\t16\tfloat32\t8.0 KiB"}, ""},
		{"over budget", append([]string{"check", model, "--memory-budget", "4KiB"}, pins...), 1,
			[]string{"2 unfused attention site(s)"}, ""},
		{"dims", []string{"check", model, "--memory-budget", "1MiB", "--dim", "batch=2", "--dim", "sequence=16"}, 0,
			[]string{"8.0 KiB"}, ""},
		{"pins disagree", []string{"check", model, "--memory-budget", "1MiB", "--shape", "input_ids=2x16", "--shape", "attention_mask=3x16"}, 2,
			nil, "--shape input_ids gives batch = 2, --shape attention_mask gives 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := runCLI(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errb)
			}
			for _, l := range tc.stdout {
				if !strings.Contains(out, l) {
					t.Errorf("stdout lacks %q:\n%s", l, out)
				}
			}
			if tc.stderr != "" {
				if !strings.Contains(errb, tc.stderr) || !strings.Contains(errb, "hf_gpt2_dynamic_dynamo") || strings.Count(strings.TrimSpace(errb), "\n") != 0 {
					t.Errorf("stderr %q, want one line naming the file and saying %q", errb, tc.stderr)
				}
			}
		})
	}
}
