package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/attnopt/attnopt/internal/testgraph"
)

// modelRow is the model-scope row of the text report: its max abs error
// and NaN/Inf cell.
var modelRow = regexp.MustCompile(`(?m)^model\t\S+\t(\S+)(?:\t[^\t\n]*){5}\t([^\t\n]*)\t`)

// Decoders with and without a KV cache validate end to end in the Go
// runtime on the seeded inputs: token and position ids stay within the
// tables they index, masks are as long as the cache and the new tokens,
// so the original runs and the rewrite matches it (issue 33: an HF Llama
// with a cache failed in the original at "GatherND index 8").
func TestValidateCLIDecodersModelScope(t *testing.T) {
	for _, name := range []string{"hf_llama_gqa", "hf_llama_gqa_dynamo", "hf_llama_gqa_dynamo_op23", "hf_llama_gqa_dynamic",
		"optimum_gpt2_past", "optimum_qwen3_past", "optimum_neox_past", "kv_cache_dynamo_op23"} {
		t.Run(name, func(t *testing.T) {
			orig := filepath.Join("..", "..", "testdata", "models", name, "model.onnx")
			if _, err := os.Stat(orig); err != nil {
				t.Skip("fixture not present")
			}
			rw := filepath.Join(t.TempDir(), "rw.onnx")
			if code, _, stderr := runCLI("rewrite", orig, "-o", rw, "--min-scores", "0", "--quiet"); code != 0 {
				t.Fatal(stderr)
			}
			code, stdout, stderr := runCLI("validate", orig, rw, "--scope", "model", "--runtime", "go", "--quiet")
			rows := modelRow.FindAllStringSubmatch(stdout, -1)
			if code != exitOK || len(rows) == 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			for _, r := range rows {
				if x, err := strconv.ParseFloat(r[1], 64); err != nil || x > 1e-4 || r[2] != "0" {
					t.Errorf("max abs %s, NaN/Inf %s", r[1], r[2])
				}
			}
		})
	}
}

// Positions read through GatherND at kv_pos + 4 are drawn below 4, so
// --scope model runs the original (it failed at "GatherND index 8"
// before) and the model matches itself exactly.
func TestValidateCLIGatherNDPositions(t *testing.T) {
	in := writeModel(t, testgraph.GatherNDPositions())
	code, stdout, stderr := runCLI("validate", in, in, "--scope", "model", "--runtime", "go", "--quiet")
	rows := modelRow.FindAllStringSubmatch(stdout, -1)
	if code != exitOK || len(rows) != 1 || rows[0][1] != "0" || rows[0][2] != "0" {
		t.Fatalf("exit %d, rows %v\n%s%s", code, rows, stdout, stderr)
	}
}
