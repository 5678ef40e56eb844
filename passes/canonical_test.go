package passes_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/passes/match"
)

// Stage 1 alone: every case lifts into attnopt.internal.SDPA nodes (one per
// site, nothing of the site left) that the pure-Go runtime evaluates to the
// original's numbers, before any target lowers them.
func TestLiftOnlyMatchesOriginal(t *testing.T) {
	for name, b := range rewriteCases() {
		t.Run(name, func(t *testing.T) {
			orig, m := b.Model(), b.Model()
			c, err := LiftOnly(m, Options{Target: "attnopt", VerifyEach: true})
			if err != nil {
				t.Fatal(err)
			}
			canon := 0
			for _, n := range m.Graph.Nodes {
				if n.Domain == "attnopt.internal" && n.OpType == "SDPA" {
					canon++
				}
				if n.Is("Softmax") {
					t.Errorf("softmax %s left after stage 1", n.Label())
				}
			}
			if canon != c.FusedCount() || canon == 0 {
				t.Fatalf("%d canonical nodes for %d fused sites", canon, c.FusedCount())
			}
			compareModels(t, orig, m, 1)
		})
	}
}

// The final graph never holds the canonical op, and every fused node says
// which site it replaced and with what plan.
func TestFusedNodesRecordSiteAndPlan(t *testing.T) {
	for name, b := range rewriteCases() {
		for _, target := range TargetNames() {
			m := b.Model()
			c, err := Rewrite(m, Options{Target: target})
			if err != nil {
				continue // the onnx target refuses opsets below 23; tested elsewhere
			}
			seen := map[int]bool{}
			for _, n := range m.Graph.Nodes {
				if n.Domain == "attnopt.internal" {
					t.Errorf("%s/%s: %s left in the output", name, target, n.Label())
				}
				id, ok := SiteOf(n)
				if !ok {
					continue
				}
				if kind, _, _, _ := RecordedPlan(n); kind != PlanExact {
					t.Errorf("%s/%s: node %s records plan %q", name, target, n.Label(), kind)
				}
				seen[id] = true
			}
			for _, a := range c.Actions {
				if a.Fused && !seen[a.Site.ID] {
					t.Errorf("%s/%s: no fused node records site %d", name, target, a.Site.ID)
				}
			}
		}
	}
}

// An approximate plan records its settings, which read back as the plan.
func TestRecordedApproximatePlans(t *testing.T) {
	b := rewriteCases()["sagan"]
	for _, c := range []struct {
		target string
		approx ApproxOptions
		kind   PlanKind
	}{
		{"attnopt", ApproxOptions{Window: []int64{2, 2}, Shift: []int64{1, 1}}, PlanWindow},
		{"ort", ApproxOptions{Pool: "kv", Stride: 2}, PlanPoolKV},
		{"ort", ApproxOptions{Pool: "qkv", Stride: 2, Upsample: "linear"}, PlanPoolQKV},
	} {
		m := b.Model()
		if _, err := Rewrite(m, Options{Target: c.target, Approx: c.approx}); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range m.Graph.Nodes {
			kind, a, grid, ok := RecordedPlan(n)
			if !ok {
				continue
			}
			found = true
			got := []string{string(kind), ints(grid), ints(a.Window), ints(a.Shift), a.Pool, strconv.FormatInt(a.Stride, 10), a.Upsample}
			want := []string{string(c.kind), "4,4", ints(c.approx.Window), ints(c.approx.Shift), c.approx.Pool, strconv.FormatInt(c.approx.Stride, 10), c.approx.Upsample}
			if strings.Join(got, ";") != strings.Join(want, ";") {
				t.Errorf("recorded %q, want %q", got, want)
			}
		}
		if !found {
			t.Errorf("%s: no node records the plan", c.kind)
		}
	}
}

// The window plan is a canonical op too (attnopt.internal.WindowSDPA):
// only attnopt's kernels run WindowAttention, so the stock targets refuse
// it with CodePlan, name the node at fault, and write the site unchanged.
func TestWindowPlanRefusedByStockTargets(t *testing.T) {
	approx := ApproxOptions{Window: []int64{2, 2}}
	for _, target := range []string{"ort", "onnx", "gqa"} {
		m := testgraph.SAGAN(23, 16, 4, 4).Model()
		before := len(m.Graph.Nodes)
		c, err := Rewrite(m, Options{Target: target, Approx: approx})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if len(c.Actions) != 1 {
			t.Fatalf("%s: %d actions", target, len(c.Actions))
		}
		a := c.Actions[0]
		switch {
		case a.Fused:
			t.Errorf("%s: fused the window plan into %s", target, a.Op)
		case a.Plan.Kind != PlanWindow:
			t.Errorf("%s: plan %s, want window", target, a.Plan.Kind)
		case a.Reject == nil || a.Reject.Code != match.CodePlan || a.Reject.Node == nil:
			t.Errorf("%s: reject %+v, want code plan naming the canonical node", target, a.Reject)
		case !strings.Contains(a.Reason, "--target attnopt"):
			t.Errorf("%s: reason %q does not name the target that runs it", target, a.Reason)
		}
		for _, n := range m.Graph.Nodes {
			if n.Domain == "attnopt" || n.Domain == "attnopt.internal" {
				t.Errorf("%s: wrote %s.%s", target, n.Domain, n.OpType)
			}
		}
		if len(m.Graph.Nodes) != before {
			t.Errorf("%s: %d nodes, want the %d the model had", target, len(m.Graph.Nodes), before)
		}
	}
}

func ints(xs []int64) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.FormatInt(x, 10))
	}
	return strings.Join(s, ",")
}

var _ = graph.Float32
