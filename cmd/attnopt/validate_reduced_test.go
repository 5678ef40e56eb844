package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/internal/testgraph"
)

// A diffusers UNet2DModel's spatial attention at 128x128 (64x64 tokens, 8
// heads of 8: 512 MiB of scores), as dynamo exports it: the site runs at a
// reduced length through its folded shape constants and PASSes in every
// runtime (issue 33: "cannot multiply [1,8,2896,4096] by [1,8,2896,8]").
// The same site with its length folded where the cut cannot reach, at
// 8 GiB of scores, is CANNOT CHECK (exit 3), in the text and JSON reports.
func TestValidateCLIReducedSpatialSite(t *testing.T) {
	if testing.Short() {
		t.Skip("a 512 MiB site validated at 2896 tokens")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name        string
		model       *testgraph.B
		code        int
		stdoutHas   []string
		jsonVerdict string
	}{
		{"unet 64x64", testgraph.SpatialSelfAttention(64, 64, 64, 8, false), exitOK,
			[]string{"\tok\n", "run at reduced length: q_len 4096 → 2896, kv_len 4096 → 2896 (the full site needs 512.0 MiB of scores)", "\nPASS\n"}, "pass"},
		{"flat K 128x128", testgraph.SpatialSelfAttention(64, 128, 128, 8, true), exitNoChecks,
			[]string{"CANNOT CHECK: original: cannot run the site at reduced length: node", "over the 2.0 GiB validation limit", "\nCANNOT CHECK\n"}, "cannot_check"},
	} {
		orig := writeModel(t, c.model)
		rw := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".onnx")
		if code, _, stderr := runCLI("rewrite", orig, "-o", rw, "--quiet"); code != 0 {
			t.Fatalf("%s: rewrite: %s", c.name, stderr)
		}
		// rewrite --validate gives the same exit, and its HTML report the
		// same verdict, never a red FAIL.
		html := rw + ".html"
		if code, stdout, stderr := runCLI("rewrite", orig, "-o", rw+".v.onnx", "--validate", "--runtime", "go", "--report", html, "--quiet"); code != c.code {
			t.Errorf("%s: rewrite --validate: exit %d, want %d\n%s%s", c.name, code, c.code, stdout, stderr)
		}
		page, err := os.ReadFile(html)
		want := map[int]string{exitOK: "PASS", exitNoChecks: "CANNOT CHECK"}[c.code]
		if err != nil || !strings.Contains(string(page), want) || strings.Contains(string(page), "FAIL") {
			t.Errorf("%s: the HTML report lacks %q or says FAIL (%v)", c.name, want, err)
		}
		for _, rt := range validateRuntimes() {
			code, stdout, stderr := runCLI(append([]string{"validate", orig, rw, "--quiet"}, rt...)...)
			if code != c.code {
				t.Errorf("%s, %s: exit %d, want %d\n%s%s", c.name, rt[1], code, c.code, stdout, stderr)
			}
			for _, w := range c.stdoutHas {
				if !strings.Contains(stdout, w) {
					t.Errorf("%s, %s: stdout lacks %q\n%s", c.name, rt[1], w, stdout)
				}
			}
			if c.code == exitOK {
				cells := siteRow.FindAllStringSubmatch(stdout, -1)
				if len(cells) != 1 || cells[0][2] != "0" {
					t.Errorf("%s, %s: site row %v", c.name, rt[1], cells)
				} else if x, err := strconv.ParseFloat(cells[0][1], 64); err != nil || x > 1e-5 {
					t.Errorf("%s, %s: max abs %s over 1e-5", c.name, rt[1], cells[0][1])
				}
			}
			code, stdout, _ = runCLI(append([]string{"validate", orig, rw, "--quiet", "--json"}, rt...)...)
			var doc struct {
				Verdict string `json:"verdict"`
				Checks  []struct {
					Verdict string `json:"verdict"`
					Error   string `json:"error"`
					Reduced string `json:"reduced"`
				} `json:"checks"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != c.code || len(doc.Checks) != 1 {
				t.Fatalf("%s, %s: exit %d, %v\n%s", c.name, rt[1], code, err, stdout)
			}
			if doc.Verdict != c.jsonVerdict || doc.Checks[0].Verdict != c.jsonVerdict {
				t.Errorf("%s, %s: JSON verdicts %q / %q, want %q", c.name, rt[1], doc.Verdict, doc.Checks[0].Verdict, c.jsonVerdict)
			}
		}
	}
}
