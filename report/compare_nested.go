package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attnopt/attnopt/passes"
)

// nestedSiteReports reports A's sites inside subgraphs (If branches, Loop
// bodies; passes/nested.go), after the main graph's. With the rewrite's
// actions each says what was done; comparing two files (diff), B's
// subgraph at the same path tells: a fused op the rewrite named after the
// site (attnopt/site<ID>/…), or the same Softmax still there.
func nestedSiteReports(match *passes.Result, actions []passes.Action, bMatch *passes.Result) []SiteReport {
	if match == nil {
		return nil
	}
	byID := map[int]*passes.Action{}
	for i := range actions {
		byID[actions[i].Site.ID] = &actions[i]
	}
	var bOps []passes.NestedOp
	if bMatch != nil {
		bOps = bMatch.Nested
	}
	var out []SiteReport
	for _, s := range passes.NestedSites(match.Nested) {
		sr := newSiteReport(s)
		sr.BytesBefore = sr.ScoreBytes
		act := byID[s.ID]
		switch {
		case act != nil && act.Fused:
			sr.Status, sr.Op, sr.FusedNode, sr.BytesAfter = SiteFused, act.Op, act.Node, sr.FusedBytes
			if act.Plan != nil && act.Plan.BytesAfter >= 0 {
				after := act.Plan.BytesAfter
				sr.BytesAfter = &after
			}
		case act != nil:
			sr.Status, sr.Reason, sr.BytesAfter = SiteLeft, act.Reason, sr.ScoreBytes
		case len(actions) > 0:
			sr.Status, sr.BytesAfter = SiteUnchanged, sr.ScoreBytes
		default:
			sr.Status = SiteRemoved
			sr.Reason = "the softmax is gone from B's subgraph and no fused node there is named for this site"
			prefix := fmt.Sprintf("attnopt/site%d/", s.ID)
			for _, o := range bOps {
				switch {
				case o.Path != s.Path:
				case strings.HasPrefix(o.Node, prefix) && o.Op != "ai.onnx.Softmax":
					sr.Status, sr.Op, sr.FusedNode, sr.BytesAfter, sr.Reason = SiteFused, o.Op, o.Node, sr.FusedBytes, ""
				case o.Node == sr.Softmax && sr.Status == SiteRemoved:
					sr.Status, sr.BytesAfter, sr.BSoftmax, sr.Reason = SiteUnchanged, sr.ScoreBytes, sr.Softmax, ""
				}
			}
		}
		if sr.Status == SiteLeft {
			sr.BSoftmax = sr.Softmax
		}
		out = append(out, sr)
	}
	return out
}

// where names a site's location for text: its Softmax, and the subgraph it
// is in, if any.
func (s SiteReport) where() string {
	if s.Subgraph != "" {
		return s.Softmax + " in " + s.Subgraph
	}
	return s.Softmax
}

// coversNested: c is the check of the outermost subgraph holding the nested
// site s (validate/nested.go).
func coversNested(c *SiteValidation, s *SiteReport) bool {
	return s.Subgraph != "" && c.Site == nil && slices.Contains(c.covers, s.ID)
}
