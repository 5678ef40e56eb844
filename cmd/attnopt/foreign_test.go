package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/internal/hostile"
)

// A PyTorch checkpoint, safetensors file or TorchScript archive given as
// the model gets one line saying what it is and how to export it to ONNX,
// exit 2 (issue 38), from every command; hostile_test.go runs them too.
func TestForeignFormatsSayHowToExport(t *testing.T) {
	for _, c := range hostile.ForeignCases() {
		t.Run(c.Name, func(t *testing.T) {
			model, err := c.Build(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"inspect", model},
				{"rewrite", model, "-o", filepath.Join(t.TempDir(), "out.onnx")},
			} {
				code, stdout, stderr := runCLI(args...)
				if code != exitBadInput || stdout != "" {
					t.Fatalf("%v: exit %d, stdout %q; want 2 and nothing", args, code, stdout)
				}
				line := strings.TrimSuffix(stderr, "\n")
				if strings.Contains(line, "\n") || !strings.HasPrefix(line, "attnopt: "+model+": "+c.Want) || strings.Contains(line, "proto") {
					t.Errorf("%v: stderr %q; want one line beginning %q", args, stderr, "attnopt: "+model+": "+c.Want)
				}
				// Every PyTorch format says how to export it; a plain zip says only what it is.
				if exports := strings.Contains(line, `torch.onnx.export(`) && strings.HasSuffix(line, "then give attnopt model.onnx"); exports != (c.Name != "other zip") {
					t.Errorf("%v: %q: says how to export: %v", args, line, exports)
				}
			}
		})
	}
}
