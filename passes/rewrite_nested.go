package passes

import (
	"fmt"
	"slices"

	"github.com/attnopt/attnopt/graph"
)

// nestScope places the rewrite of one subgraph in the whole model: where it
// is, the site IDs already given out, and the names every scope uses (a
// fused node or value in a subgraph never takes a name used elsewhere).
type nestScope struct {
	path     string
	next     *int
	reserved map[string]bool
}

// place numbers the sites a nested match found after those of the scopes
// matched before it; the main graph (no scope) keeps its own numbering.
func (sc *nestScope) place(r *Result) {
	if sc != nil {
		*sc.next = r.place(sc.path, *sc.next) - len(NestedSites(r.Nested))
	}
}

// rewriteNested runs the pipeline on every subgraph of the holders (the
// nodes that had graph attributes before the graph's own rewrite), depth
// first, and writes back each subgraph where a site was fused. Their
// actions join c's, with the site's Path set.
func (c *Context) rewriteNested(holders []*graph.Node) error {
	sc := c.Opts.scope
	if sc == nil {
		next := len(c.Match.Sites)
		sc = &nestScope{next: &next, reserved: map[string]bool{}}
		c.Model.Names(sc.reserved)
	}
	g := c.Model.Graph
	changed := false
	for _, n := range holders {
		if !slices.Contains(g.Nodes, n) {
			continue
		}
		subs, err := g.Subgraphs(n, sc.reserved)
		if err != nil {
			// inspect lists its attention with this reason.
			continue
		}
		for _, s := range subs {
			opts := c.Opts
			opts.scope = &nestScope{path: ScopePath(sc.path, n, s), next: sc.next, reserved: sc.reserved}
			// Exact fusion only: an approximation's error is measured per
			// site on the main graph (validate/approx.go), which cannot
			// reach into subgraphs.
			opts.Approx = ApproxOptions{MemoryBudget: c.Opts.Approx.MemoryBudget}
			sub, err := Rewrite(s.Model, opts)
			if sub != nil {
				for _, a := range sub.Actions {
					if a.Plan != nil && a.Plan.Kind == PlanExact && c.approxAsked() {
						a.Plan.Reason = "exact: approximations apply to the main graph's sites only"
					}
				}
				c.Actions = append(c.Actions, sub.Actions...)
				c.LayoutFolds += sub.LayoutFolds
				c.DeadRemoved += sub.DeadRemoved
			}
			if err != nil {
				return fmt.Errorf("%s: %w", opts.scope.path, err)
			}
			if sub.FusedCount() == 0 {
				continue
			}
			if err := s.Inline(); err != nil {
				return fmt.Errorf("%s: %w", opts.scope.path, err)
			}
			s.Model.Names(sc.reserved)
			// Opset imports live on the model, not on its subgraphs.
			for _, o := range s.Model.Opsets {
				if c.Model.Opset(o.Domain) < o.Version {
					c.Model.SetOpset(o.Domain, o.Version)
				}
			}
			changed = true
		}
	}
	if !changed {
		return nil
	}
	// Outer values only a subgraph's replaced nodes read are dead now.
	c.DeadRemoved += g.RemoveDead()
	return g.Sort()
}

// approxAsked: the options ask for approximations (explicitly, or where a
// site does not fit the budget).
func (c *Context) approxAsked() bool {
	o := c.Opts.Approx
	return o.Window != nil || o.Pool != "" || o.AllowApprox
}
