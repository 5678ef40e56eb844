package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attnopt/attnopt/internal/hostile"
)

// TestRewriteWritesNothingForRefusedFusedOps: a fused op ONNX Runtime
// refuses (internal/hostile/fused.go) makes rewrite exit 2 naming the node,
// before any output exists; the input is untouched. (TestHostileInputs
// checks every command's exit code and message.)
func TestRewriteWritesNothingForRefusedFusedOps(t *testing.T) {
	for _, c := range hostile.FusedCases() {
		t.Run(c.Name, func(t *testing.T) {
			model, err := c.Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(model)
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.onnx")
			code, _, stderr := runWithTimeout(t, []string{"rewrite", model, "-o", out, "--report", filepath.Join(outDir, "r.json")}, 60*time.Second)
			if code != exitBadInput || !strings.Contains(stderr, c.Want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, c.Want)
			}
			if es, _ := os.ReadDir(outDir); len(es) != 0 {
				t.Fatalf("refused rewrite left %d file(s) in the output folder", len(es))
			}
			if after, _ := os.ReadFile(model); !bytes.Equal(before, after) {
				t.Fatal("the input was modified")
			}
		})
	}
}
