package passes

import (
	"fmt"
	"slices"

	"github.com/attnopt/attnopt/passes/plan"
)

// nestedPass is the table's row for attention inside If/Loop/Scan bodies
// and decoder subgraphs: it runs the table on every subgraph of the nodes
// that had graph attributes before this graph's own rewrite, depth first
// (the subgraph's own nested row goes deeper), and writes back each
// subgraph where a site was fused. Their actions join c's, with the site's
// Path set, numbered after the sites matched before them.
func nestedPass(c *Context) error {
	if c.model.reserved == nil {
		c.model.reserved = map[string]bool{}
		c.Model.Names(c.model.reserved)
	}
	g := c.Model.Graph
	changed := false
	for _, n := range c.holders {
		if !slices.Contains(g.Nodes, n) {
			continue
		}
		subs, err := g.Subgraphs(n, c.model.reserved)
		if err != nil {
			// inspect lists its attention with this reason.
			continue
		}
		for _, s := range subs {
			opts := c.Opts
			// Exact fusion only: an approximation's error is measured per
			// site on the main graph (validate/approx.go), which cannot
			// reach into subgraphs.
			opts.Approx = ApproxOptions{MemoryBudget: c.Opts.Approx.MemoryBudget}
			sub := &Context{Model: s.Model, Opts: opts, Target: c.Target, path: ScopePath(c.path, n, s), model: c.model}
			err := sub.runTable("")
			for _, a := range sub.Actions {
				if a.Plan != nil && a.Plan.Kind == plan.Exact && c.approxAsked() {
					a.Plan.Reason = "exact: approximations apply to the main graph's sites only"
				}
			}
			c.Actions = append(c.Actions, sub.Actions...)
			c.stat.Folds += sub.LayoutFolds
			c.stat.Removed += sub.DeadRemoved
			if err != nil {
				return fmt.Errorf("%s: %w", sub.path, err)
			}
			if sub.FusedCount() == 0 {
				continue
			}
			if err := s.Inline(); err != nil {
				return fmt.Errorf("%s: %w", sub.path, err)
			}
			s.Model.Names(c.model.reserved)
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
	c.stat.Removed += g.RemoveDead()
	return g.Sort()
}

// approxAsked: the options ask for approximations (explicitly, or where a
// site does not fit the budget).
func (c *Context) approxAsked() bool {
	o := c.Opts.Approx
	return o.Window != nil || o.Pool != "" || o.AllowApprox
}
