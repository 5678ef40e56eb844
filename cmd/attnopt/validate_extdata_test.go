package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Real exports whose weights lie in model.onnx.data beside them (the
// synthetic model of external_data_test.go, as torch writes them): rewrites PASS
// from a folder other than the models' (the test runs in a fresh one, the
// rewrite written to a third), at sites and model scope, in every runtime
// (issue 33): ONNX Runtime once resolved the data against the working
// directory, and the reduced-length run of the UNet's channels-first sites
// cut V's length but not the scores' key axis (a checker failure reported
// as the rewrite's FAIL). extdata_unet128: diffusers UNet2DModel at
// 128x128, 4 sites of 4096 tokens whose scores are 320 MiB each;
// extdata_qwen3_past: a decode step after a KV cache, left-padded.
func TestValidateRealExternalDataModels(t *testing.T) {
	for _, name := range []string{"extdata_unet128", "extdata_qwen3_past"} {
		t.Run(name, func(t *testing.T) {
			orig, err := filepath.Abs(filepath.Join("..", "..", "testdata", "models", name, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(orig + ".data"); err != nil {
				t.Skip("fixture not present")
			}
			t.Chdir(t.TempDir())
			outDir := t.TempDir()
			rw := filepath.Join(outDir, "rw.onnx")
			if code, _, stderr := runCLI("rewrite", orig, "-o", rw, "--target", "attnopt", "--min-scores", "0", "--quiet"); code != exitOK {
				t.Fatalf("rewrite: exit %d\n%s", code, stderr)
			}
			if _, err := os.Stat(rw + ".data"); err != nil {
				t.Fatalf("the rewrite's data is not beside it: %v", err)
			}
			for _, rt := range validateRuntimes() {
				for _, scope := range []string{"sites", "model"} {
					code, stdout, stderr := runCLI(append([]string{"validate", orig, rw, "--scope", scope, "--quiet"}, rt...)...)
					if code != exitOK || !strings.Contains(stdout, "\nPASS") || strings.Contains(stdout, "CANNOT CHECK") {
						t.Fatalf("%s, scope %s: exit %d\n%s%s", rt[1], scope, code, stdout, stderr)
					}
					rows := siteRow.FindAllStringSubmatch(stdout, -1)
					if scope == "sites" && len(rows) == 0 {
						t.Fatalf("%s: no site rows\n%s", rt[1], stdout)
					}
					for _, r := range rows {
						if x, err := strconv.ParseFloat(r[1], 64); err != nil || x > 1e-4 || r[2] != "0" {
							t.Errorf("%s, scope %s: max abs %s, NaN/Inf %s", rt[1], scope, r[1], r[2])
						}
					}
				}
			}
		})
	}
}
