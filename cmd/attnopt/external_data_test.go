package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A model with external data, and its rewrite written into another folder
// (whose data is copied beside it), validate from a third working folder
// at both scopes in both runtimes: each side's external data is read from
// its own model's folder, not the working directory (ONNX Runtime, given a
// model as bytes, would resolve it there and refuse a path outside it).
func TestValidateExternalDataFromAnotherFolder(t *testing.T) {
	models, outs := t.TempDir(), t.TempDir()
	orig := externalAttention(t, models, "model.onnx", "model.onnx.data")
	fused := filepath.Join(outs, "fused.onnx")
	if code, stdout, stderr := runCLI("rewrite", orig, "-o", fused, "--quiet", "--min-scores", "0"); code != 0 || !strings.Contains(stdout, "written beside the output into its own data file") {
		t.Fatalf("rewrite: exit %d:\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(fused + ".data"); err != nil {
		t.Fatalf("the rewrite's data file: %v", err)
	}
	runtimes := []string{"go"}
	if os.Getenv("ONNXRUNTIME_LIB") != "" && os.Getenv("ATTNOPT_CUSTOM_OPS") != "" {
		runtimes = append(runtimes, "ort")
	} else {
		t.Log("ONNXRUNTIME_LIB or ATTNOPT_CUSTOM_OPS unset: Go runtime only")
	}
	for _, wd := range []string{t.TempDir(), models} {
		t.Chdir(wd)
		for _, rt := range runtimes {
			for _, scope := range []string{"sites", "model"} {
				code, stdout, stderr := runCLI("validate", orig, fused, "--runtime", rt, "--scope", scope)
				if code != 0 || !strings.HasSuffix(strings.TrimSpace(stdout), "PASS") || strings.Contains(stdout, "ERROR") {
					t.Errorf("from %s, %s, --scope %s: exit %d:\n%s%s", wd, rt, scope, code, stdout, stderr)
				}
			}
		}
	}
}
