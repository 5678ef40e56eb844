package passes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	. "github.com/attnopt/attnopt/passes"
)

// TestRefusedByDesign: attention that is not a site by design is refused
// with the reason inspect --explain prints (passes/match/refusals.go,
// rows.go; docs/cli.md "Refused by design"), and the ordinary attention
// beside it in the same model is still found.
func TestRefusedByDesign(t *testing.T) {
	cases := []struct {
		model   string
		sites   int    // sites still found
		refused int    // Softmaxes refused with reason
		reason  string // in every refusal
	}{
		{"hf_informer", 1, 2, "ProbSparse attention"},
		{"natten_unfold", 0, 1, "neighbourhood attention"},
		{"hf_funnel", 0, 2, "subtracts the finite fill 1e+06 beside"},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			m, err := graph.Load(filepath.Join("..", "testdata", "models", tc.model, "model.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			res := FindSites(m.Graph)
			if len(res.Sites) != tc.sites || len(res.Rejected) != tc.refused {
				t.Fatalf("%d sites, %d refused; want %d and %d: %v", len(res.Sites), len(res.Rejected), tc.sites, tc.refused, res.Rejected)
			}
			for _, r := range res.Rejected {
				if !strings.Contains(r.Reason, tc.reason) || strings.Contains(r.Reason, "\n") {
					t.Errorf("%s: reason %q, want one line with %q", r.Softmax.Label(), r.Reason, tc.reason)
				}
			}
		})
	}
}
