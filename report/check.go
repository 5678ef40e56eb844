package report

import (
	"fmt"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/version"
	"github.com/attnopt/attnopt/passes"
)

// CheckSchemaV1 names the JSON schema of Check (report/schema/check.v1.json).
const CheckSchemaV1 = "attnopt.check/v1"

// Check is the `attnopt check` report: every unfused attention site of a
// model with its score tensor, and every fused op with what it adds beyond
// its inputs and output, against a per-site memory budget. It fails when a
// site or a fused op is over the budget, and, when Strict, also when a
// site's size is unknown.
type Check struct {
	Schema  string       `json:"schema"`
	Version string       `json:"version"`
	Model   string       `json:"model"`
	Budget  int64        `json:"budget_bytes"`
	Strict  bool         `json:"strict"`
	Pass    bool         `json:"pass"`
	Over    int          `json:"over"`
	Unknown int          `json:"unknown"`
	Sites   []CheckSite  `json:"sites"`
	Fused   []CheckFused `json:"fused"`
	// Provenance is set by the CLI.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// CheckSite is one unfused site.
type CheckSite struct {
	ID         int         `json:"id"`
	Subgraph   string      `json:"subgraph,omitempty"` // for a site inside an If/Loop body: its path
	Softmax    string      `json:"softmax"`
	Variant    string      `json:"variant"`
	DType      string      `json:"dtype"`
	Shape      SiteShape   `json:"shape"`
	ScoreBytes *int64      `json:"score_bytes"`
	FusedBytes *int64      `json:"fused_bytes"`
	Status     CheckStatus `json:"status"`
}

// CheckFused is an already-fused attention op, judged by what it adds
// beyond its inputs and output (fused_bytes, docs/design.md §6), not by
// Q, K, V and O, which the original holds too. A size it cannot read
// (another runtime's op, a symbolic length) is unknown, and --strict does
// not fail on it.
type CheckFused struct {
	FusedInfo
	Status CheckStatus `json:"status"`
}

// NewCheck checks the sites of m against budget bytes per site.
func NewCheck(path string, m *graph.Model, budget int64, strict bool) *Check {
	res := passes.FindSites(m.Graph)
	c := &Check{Schema: CheckSchemaV1, Version: version.Version, Model: path, Budget: budget, Strict: strict, Sites: []CheckSite{}, Fused: []CheckFused{}}
	for _, n := range m.Graph.Nodes {
		if !passes.IsFusedAttention(n) {
			continue
		}
		f := CheckFused{FusedInfo: newFusedInfo(n, n.Label()), Status: CheckOK}
		switch {
		case f.FusedBytes == nil:
			f.Status = CheckUnknown
		case *f.FusedBytes > budget:
			f.Status = CheckOver
			c.Over++
		}
		c.Fused = append(c.Fused, f)
	}
	// Sites inside subgraphs too: rewrite fuses them the same way.
	for _, s := range append(res.Sites, passes.NestedSites(res.Nested)...) {
		sr := newSiteReport(s)
		cs := CheckSite{ID: sr.ID, Subgraph: sr.Subgraph, Softmax: sr.Softmax, Variant: sr.Variant, DType: sr.DType, Shape: sr.Shape,
			ScoreBytes: sr.ScoreBytes, FusedBytes: sr.FusedBytes, Status: CheckOK}
		switch {
		case cs.ScoreBytes == nil:
			cs.Status = CheckUnknown
			c.Unknown++
		case *cs.ScoreBytes > budget:
			cs.Status = CheckOver
			c.Over++
		}
		c.Sites = append(c.Sites, cs)
	}
	c.Pass = c.Over == 0 && (!strict || c.Unknown == 0)
	return c
}

// Failure is the one-line reason the check failed, naming the sites; ""
// when it passed.
func (c *Check) Failure() string {
	if c.Pass {
		return ""
	}
	var names []string
	for _, s := range c.Sites {
		if s.Status == CheckOver || (c.Strict && s.Status == CheckUnknown) {
			names = append(names, fmt.Sprintf("site %d (%s) %s", s.ID, s.Softmax, HumanBytes(s.ScoreBytes)))
		}
	}
	for _, f := range c.Fused {
		if f.Status == CheckOver {
			names = append(names, fmt.Sprintf("fused op %s adds %s", f.Node, HumanBytes(f.FusedBytes)))
		}
	}
	what := fmt.Sprintf("%d site(s) or fused op(s) over the %s budget", c.Over, HumanBytes(&c.Budget))
	if c.Strict && c.Unknown > 0 {
		what += fmt.Sprintf(", %d of unknown size (--strict)", c.Unknown)
	}
	return fmt.Sprintf("%s: %s: %s", c.Model, what, strings.Join(names, ", "))
}

func (c *Check) verdictLine() string {
	b := HumanBytes(&c.Budget)
	switch {
	case !c.Pass:
		return "FAIL: " + c.Failure()
	case len(c.Sites) == 0:
		return fmt.Sprintf("PASS: no unfused attention site (%d fused op(s), each adding at most the budget beyond its inputs and output); budget %s", len(c.Fused), b)
	case c.Unknown > 0:
		return fmt.Sprintf("PASS: %d site(s) within %s, %d of unknown size (pin symbolic dims with --dim or --shape; --strict fails on them)", len(c.Sites)-c.Unknown, b, c.Unknown)
	}
	return fmt.Sprintf("PASS: all %d unfused site(s) within %s", len(c.Sites), b)
}
