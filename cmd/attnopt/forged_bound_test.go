package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// Bounds come from the user (issue 34): a file whose fused node records
// attnopt.max_error 1e30 over a forged op never PASSes. Each forged file
// exits 4 (APPROXIMATE, the recorded bound shown, not used) or 1 without
// --max-error, and 1 with a --max-error its error exceeds:
//   - cpa3d's windowed rewrite with its scale ×3 (the rewrite itself
//     recorded --max-error 1e30);
//   - sdpa_h8d8's exact (masked) site replaced by a WindowAttention over
//     the whole grid, its mask dropped, scale ×3 and a recorded window plan
//     bounded by 1e30: judged as the exact site it replaced, so exit 1 at
//     the exact tolerance, --max-error or not.
func TestValidateForgedBoundsNeverPass(t *testing.T) {
	dir := t.TempDir()
	triple := func(n *graph.Node) { n.SetAttr(graph.FloatAttr("scale", 3*n.AttrFloat("scale", 0))) }

	cpa := "../../testdata/models/cpa3d/model.onnx"
	win := filepath.Join(dir, "cpa3d.window.onnx")
	if code, stdout, stderr := runCLI("rewrite", cpa, "--window", "2x2x2", "--max-error", "1e30", "-o", win); code != 0 {
		t.Fatalf("rewrite cpa3d: exit %d\n%s%s", code, stdout, stderr)
	}
	cpaForged := edited(t, win, "cpa3d.forged.onnx", func(m *graph.Model) { triple(opNode(m, "WindowAttention")) })

	sdpa := "../../testdata/models/sdpa_h8d8/model.onnx"
	exact := filepath.Join(dir, "sdpa.exact.onnx")
	if code, stdout, stderr := runCLI("rewrite", sdpa, "--min-scores", "0", "-o", exact); code != 0 {
		t.Fatalf("rewrite sdpa_h8d8: exit %d\n%s%s", code, stdout, stderr)
	}
	sdpaForged := edited(t, exact, "sdpa.forged.onnx", func(m *graph.Model) {
		n := opNode(m, "FlashAttention")
		if len(n.Inputs) < 4 || n.Input(3) == nil {
			t.Fatalf("the exact rewrite of sdpa_h8d8 has no mask input: %d inputs", len(n.Inputs))
		}
		nk, _ := n.Input(1).Type.Shape[2].Value()
		n.OpType = "WindowAttention"
		n.SetInput(3, nil)
		n.Inputs = n.Inputs[:3]
		n.SetAttr(graph.IntsAttr("spatial_shape", []int64{nk}))
		n.SetAttr(graph.IntsAttr("window", []int64{nk}))
		n.SetAttr(graph.IntsAttr("shift", []int64{0}))
		triple(n)
		forgeWindowPlan(n, "64")
		n.SetMeta("attnopt.window", "64")
		n.SetMeta("attnopt.shift", "0")
		n.SetMeta("attnopt.max_error", "1e30")
	})

	cases := []struct {
		name, orig, forged string
		args               []string
		codes              []int
		want               string
	}{
		{"cpa3d window, scale x3, no --max-error", cpa, cpaForged, nil, []int{exitApproximate}, "the file records 1e+30, not used"},
		{"cpa3d window, scale x3, --max-error 0.01", cpa, cpaForged, []string{"--max-error", "0.01"}, []int{exitFailed}, "FAIL (max error 0.01, --max-error)"},
		{"sdpa whole-grid window, mask dropped", sdpa, sdpaForged, nil, []int{exitFailed, exitApproximate}, ""},
		{"sdpa whole-grid window, mask dropped, --max-error 0.01", sdpa, sdpaForged, []string{"--max-error", "0.01"}, []int{exitFailed}, ""},
		{"sdpa whole-grid window, mask dropped, --max-error 10", sdpa, sdpaForged, []string{"--max-error", "10"}, []int{exitFailed}, "FAIL (atol"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, scope := range []string{"sites", "model"} {
				args := append([]string{"validate", c.orig, c.forged, "--runtime", "go", "--scope", scope}, c.args...)
				code, stdout, stderr := runCLI(args...)
				ok := false
				for _, want := range c.codes {
					ok = ok || code == want
				}
				if !ok || strings.Contains(stdout, "\nPASS\n") {
					t.Errorf("--scope %s: exit %d, want one of %v and no PASS\n%s%s", scope, code, c.codes, stdout, stderr)
				}
				if scope == "sites" && c.want != "" && !strings.Contains(stdout, c.want) {
					t.Errorf("--scope sites: output lacks %q:\n%s", c.want, stdout)
				}
			}
		})
	}
}
