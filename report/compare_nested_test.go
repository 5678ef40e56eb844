package report

import (
	"bytes"
	"strings"
	"testing"
)

// Sites inside If branches and a Loop body are in the rewrite report and in
// the diff of the two files, with their subgraph, fused, and counted in the
// totals; the JSON conforms to the schema.
func TestReportsShowNestedSites(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		paths   []string
	}{
		{"cond_if_dynamo", []string{"If node_cond__0/then_branch", "If node_cond__0/else_branch"}},
		{"loop_script", []string{"Loop Loop_10/body"}},
	} {
		rewrite, diff := fixtureReports(t, tc.fixture)
		for _, r := range []*Report{rewrite, diff} {
			if len(r.Sites) != len(tc.paths) || r.Totals.Fused != len(tc.paths) {
				t.Fatalf("%s %s: %d sites, %d fused; want %d", tc.fixture, r.Kind, len(r.Sites), r.Totals.Fused, len(tc.paths))
			}
			for i, p := range tc.paths {
				if s := r.Sites[i]; s.Subgraph != p || s.Status != SiteFused || s.Op != "attnopt.FlashAttention" || s.FusedNode == "" {
					t.Errorf("%s %s site %d: %q %s %s %q; want fused in %q", tc.fixture, r.Kind, i, s.Subgraph, s.Status, s.Op, s.FusedNode, p)
				}
			}
			var buf bytes.Buffer
			if err := Render(&buf, JSON, r, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			validateAgainst(t, "report.v1.json", buf.Bytes())
			if !bytes.Contains(buf.Bytes(), []byte(`"subgraph": "`+tc.paths[0]+`"`)) {
				t.Errorf("%s %s: JSON has no subgraph field", tc.fixture, r.Kind)
			}
		}
		if rewrite.Validation == nil || !rewrite.Validation.Pass {
			t.Errorf("%s: validation %+v", tc.fixture, rewrite.Validation)
		}
		for _, s := range rewrite.Sites {
			if v := s.Validation; v == nil || !v.Pass || !strings.HasPrefix(v.Name, s.Subgraph+" (site") {
				t.Errorf("%s site %d: its subgraph's check is not attached: %+v", tc.fixture, s.ID, v)
			}
		}
	}
}
