package validate

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// unrewritten reports whether the rewrite still holds every node of site s
// as the original has it (same label, op, inputs and attributes): the site
// was not rewritten, and comparing it with itself would check nothing, so
// it is no check at all (a pair with no rewritten site is NO CHECKS,
// docs/validate.md). rew maps the rewrite's nodes by Label.
func unrewritten(s *passes.Site, rew map[string]*graph.Node) bool {
	for _, n := range s.Nodes {
		m := rew[n.Label()]
		if m == nil || m.OpType != n.OpType || m.Domain != n.Domain || !sameInputs(n, m) || attrDiff(n, m, false) != "" {
			return false
		}
	}
	return len(s.Nodes) > 0
}

// nodesByLabel maps g's nodes by Label.
func nodesByLabel(g *graph.Graph) map[string]*graph.Node {
	out := make(map[string]*graph.Node, len(g.Nodes))
	for _, n := range g.Nodes {
		out[n.Label()] = n
	}
	return out
}
