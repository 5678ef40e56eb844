package validate

import (
	"fmt"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
	"google.golang.org/protobuf/proto"
)

// nestedChecks validates the sites rewritten inside subgraphs (If branches,
// Loop bodies, decoder graphs), which per-site extraction from the main
// graph cannot reach. Each changed subgraph that holds a site is wrapped as
// a model (graph/subgraph.go), original and rewrite alike, and the two are
// run on the same seeded inputs — so both branches of an If are checked,
// whichever one the model's own inputs would take. A subgraph that cannot
// run alone (an input without a shape, or random values it cannot take,
// such as a shape tensor) is checked by running both whole models instead,
// once. It also returns the nodes whose subgraphs a check covered, whose
// graph attributes untouchedChanges then does not report.
func nestedChecks(orig, rew *graph.Model, r Runner, opts Options) ([]Check, map[string]bool) {
	covered := map[string]bool{}
	var checks []Check
	whole := false
	nested := passes.FindSites(orig.Graph).Nested
	// By label: an unnamed If is known by its first output, whose name a
	// rewrite keeps.
	rewByName := nodesByLabel(rew.Graph)
	for _, n := range orig.Graph.Nodes {
		rn := rewByName[n.Label()]
		if !n.HasSubgraphs() || rn == nil || rn.OpType != n.OpType || sameSubgraphs(n, rn) {
			continue
		}
		a, errA := orig.Graph.Subgraphs(n, nil)
		b, errB := rew.Graph.Subgraphs(rn, nil)
		if errA != nil || errB != nil || len(a) != len(b) {
			continue
		}
		covered[n.Name] = true // untouchedChanges matches named nodes only
		for i := range a {
			path := passes.ScopePath("", n, a[i])
			var in []*passes.Site
			for _, s := range passes.NestedSites(nested) {
				if s.Path == path || strings.HasPrefix(s.Path, path+" / ") {
					in = append(in, s)
				}
			}
			if len(in) == 0 || proto.Equal(a[i].Model.ToProto().Graph, b[i].Model.ToProto().Graph) {
				continue
			}
			name := fmt.Sprintf("%s (site%s)", path, siteIDs(in))
			c := compareModels(pair{name: name, a: a[i].Model, b: b[i].Model}, r, opts)
			for _, s := range in {
				c.Covers = append(c.Covers, s.ID)
			}
			if c.Error != "" && !strings.HasPrefix(c.Error, "rewrite: ") {
				// The original itself cannot run alone: judge by the whole model.
				whole = true
				continue
			}
			checks = append(checks, c)
		}
	}
	if whole {
		c := Check{Name: "whole model (for sites in subgraphs that cannot run alone)"}
		if err := CheckModelScope(orig, opts.Dims); err != nil {
			c.Error = "cannot run the original whole to check its subgraphs: " + err.Error()
		} else {
			c = compareModels(pair{name: c.Name, a: orig, b: rew, user: true}, r, opts)
		}
		checks = append(checks, settle(c))
	}
	return checks, covered
}

// sameSubgraphs: the two nodes' graph attributes are identical.
func sameSubgraphs(a, b *graph.Node) bool {
	for _, x := range a.Attrs {
		if x.Kind != graph.AttrGraph {
			continue
		}
		if y := b.Attr(x.Name); y == nil || !x.Equal(y) {
			return false
		}
	}
	return true
}

func siteIDs(sites []*passes.Site) string {
	var b strings.Builder
	for i, s := range sites {
		if i == 0 && len(sites) > 1 {
			b.WriteString("s")
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", s.ID)
	}
	return b.String()
}
