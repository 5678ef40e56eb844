package main

import (
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

func TestRewriteApproximations(t *testing.T) {
	in := writeModel(t, testgraph.SAGAN(17, 16, 16, 16))
	cases := []struct {
		args []string
		code int
		want []string
	}{
		// Without --max-error an approximate site is measured but not a
		// pass: exit 4 (APPROXIMATE), the file written all the same.
		{[]string{"--window", "8x8"}, 4, []string{"attnopt.WindowAttention", "plan: window 8x8 over grid 16x16", "APPROXIMATE (not a pass)"}},
		// A window over the whole grid approximates nothing: validated as
		// the exact site it replaced (issue 34), it passes.
		{[]string{"--window", "16x16", "--shift", "4x4"}, 0, []string{"window 16x16 shift 4x4", "\nPASS"}},
		{[]string{"--pool", "kv", "--stride", "2"}, 4, []string{"pool K,V stride 2 over grid 16x16"}},
		{[]string{"--pool", "qkv", "--stride", "4", "--upsample", "linear"}, 4, []string{"pool Q,K,V stride 4", "linear upsample"}},
		// Under a --max-error it meets, the rewrite records the bound and passes.
		{[]string{"--window", "8x8", "--max-error", "100"}, 0, []string{"approximate: ok (max error 100, --max-error)", "\nPASS"}},
		// --max-error backs off to exact attention when no window meets it.
		{[]string{"--window", "4", "--max-error", "1e-4"}, 0, []string{"trying window 8x8", "approximation refused"}},
		// A budget the fused op fits keeps it exact; one it does not fit,
		// with --allow-approx, takes the least lossy pooling that fits.
		{[]string{"--memory-budget", "1MiB", "--allow-approx"}, 0, []string{"plan: exact", "fits the budget"}},
		{[]string{"--memory-budget", "30KiB", "--allow-approx"}, 4, []string{"plan: pool K,V stride 2", "least lossy"}},
		{[]string{"--memory-budget", "30KiB"}, 0, []string{"plan: exact", "approximations need --allow-approx"}},
		{[]string{"--memory-budget", "lots"}, 2, nil},
		{[]string{"--pool", "xy"}, 2, nil},
		{[]string{"--window", "8", "--pool", "kv"}, 2, nil},
		{[]string{"--window", "8", "--grid", "3x3"}, 0, []string{"--grid 3x3 has 9 cells"}},
	}
	for _, tc := range cases {
		args := append([]string{"rewrite", in, "-o", in + ".out.onnx"}, tc.args...)
		code, stdout, stderr := runCLI(args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d: %s%s", tc.args, code, tc.code, stdout, stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, stdout)
			}
		}
	}
}

// Stock ONNX Runtime cannot run attnopt.WindowAttention: --target ort
// (or onnx) leaves a window-planned site as it is, says why, and writes no
// attnopt op.
func TestRewriteWindowOnStockTargetRefused(t *testing.T) {
	in := writeModel(t, testgraph.SAGAN(23, 16, 16, 16))
	for _, target := range []string{"ort", "onnx"} {
		out := in + "." + target + ".onnx"
		code, stdout, stderr := runCLI("rewrite", in, "-o", out, "--target", target, "--window", "8x8")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s%s", target, code, stdout, stderr)
		}
		for _, w := range []string{"left as is: the window plan computes attnopt.WindowAttention", "0 of 1 site(s) fused (target " + target + ")", "not applied"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: output lacks %q:\n%s", target, w, stdout)
			}
		}
		m, err := graph.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range m.Graph.Nodes {
			if strings.HasPrefix(n.Domain, "attnopt") {
				t.Errorf("%s: wrote %s.%s", target, n.Domain, n.OpType)
			}
		}
	}
}

// An approximate site too big to run whole is checked against a fresh
// rewrite of the site with its plan. The rewrite's cleanup folds the site's
// adapters into the model's own layout ops outside the site (2 layout folds
// here), which the fresh rewrite must see too: README's CPA3D example
// (2,097,152 tokens) must run; without --max-error it is APPROXIMATE.
func TestRewriteBigApproximateSiteValidates(t *testing.T) {
	out := t.TempDir() + "/cpa3d.attnopt.onnx"
	code, stdout, stderr := runCLI("rewrite", "../../testdata/examples/seed_cpa3d_128.onnx", "-o", out, "--memory-budget", "3GiB", "--allow-approx")
	if code != exitApproximate {
		t.Fatalf("exit %d, want 4: %s%s", code, stdout, stderr)
	}
	for _, w := range []string{"2 layout fold(s)", "plan: pool K,V stride 2", "APPROXIMATE (not a pass)", "run at reduced length", "\nAPPROXIMATE (not a pass)\n"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
}
