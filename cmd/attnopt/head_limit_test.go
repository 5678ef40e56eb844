package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// TestRewriteKeepsSitesPastTheHeadLimit: `rewrite` (target attnopt) leaves
// a site whose head size is past the kernels' limit (internal/opdef) as it
// was and says why (--json: reason_code "limit"), exit 0, and the model it
// writes holds no attnopt op; at the limit the site is fused, and --target ort fuses the larger one.
// --min-scores 0: these sites are small, and the limit is what is tested.
func TestRewriteKeepsSitesPastTheHeadLimit(t *testing.T) {
	for _, c := range []struct {
		d      int
		target string
		want   string
		fused  bool
	}{
		{opdef.HeadDimMax + 44, "attnopt", "left as is: head sizes Dqk 300, Dv 300: attnopt's kernels take 1..256 (use --target ort)", false},
		{opdef.HeadDimMax, "attnopt", "1 of 1 site(s) fused (target attnopt)", true},
		{opdef.HeadDimMax + 44, "ort", "1 of 1 site(s) fused (target ort)", true},
	} {
		in := writeModel(t, testgraph.SDPABoolMask(17, graph.Float32, 1, 2, 8, c.d))
		out := filepath.Join(t.TempDir(), "out.onnx")
		code, stdout, stderr := runCLI("rewrite", in, "--target", c.target, "--min-scores", "0", "-o", out)
		if code != 0 || !strings.Contains(stdout, c.want) {
			t.Fatalf("d %d --target %s: exit %d, stdout:\n%s\nstderr: %s\nwant %q", c.d, c.target, code, stdout, stderr, c.want)
		}
		if !c.fused && !strings.Contains(stdout, "0 of 1 site(s) fused") {
			t.Errorf("d %d: %s", c.d, stdout)
		}
		m, err := graph.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		attnopt := 0
		for _, n := range m.Graph.Nodes {
			if opdef.Lookup(n.Domain, n.OpType) != nil {
				attnopt++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[c.fused && c.target == "attnopt"]; attnopt != want {
			t.Errorf("d %d --target %s: %d attnopt op(s) written, want %d", c.d, c.target, attnopt, want)
		}
		// --json: the kept site carries the typed code, and the report conforms.
		code, stdout, stderr = runCLI("rewrite", in, "--target", c.target, "--min-scores", "0", "--json", "-o", out)
		if code != 0 {
			t.Fatalf("d %d --target %s --json: exit %d: %s", c.d, c.target, code, stderr)
		}
		conforms(t, "report.v1.json", stdout)
		var rep struct {
			Sites []struct {
				Status     string `json:"status"`
				ReasonCode string `json:"reason_code"`
			} `json:"sites"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Sites) != 1 {
			t.Fatalf("d %d --json: %v, %d sites:\n%s", c.d, err, len(rep.Sites), stdout)
		}
		want := map[bool][2]string{true: {"fused", ""}, false: {"left", "limit"}}[c.fused]
		if got := rep.Sites[0]; got.Status != want[0] || got.ReasonCode != want[1] {
			t.Errorf("d %d --target %s --json: status %q, reason_code %q; want %q, %q", c.d, c.target, got.Status, got.ReasonCode, want[0], want[1])
		}
	}
}
