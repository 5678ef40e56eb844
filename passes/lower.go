package passes

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
)

// lowerPass is stage 2: the target lowers every canonical node stage 1 left
// (it accepted each one then) into its own op, which records the site id
// and plan for validate and report.
func lowerPass(c *Context) error {
	g := c.Model.Graph
	for _, n := range append([]*graph.Node(nil), g.Nodes...) {
		if !isCanonical(n) {
			continue
		}
		o := sdpaOf(n)
		a := c.action(o.Site)
		if a == nil {
			return fmt.Errorf("%s %s names site %d, which stage 1 did not fuse", opName(n), n.Label(), o.Site)
		}
		before := len(g.Nodes)
		out, err := c.Target.Lower(emit.New(g, sitePrefix(o.Site)), o)
		if err != nil {
			return fmt.Errorf("site %d: %s accepted the site but cannot lower it: %w", o.Site, c.Target.Name(), err)
		}
		for _, m := range g.Nodes[before:] {
			if c.Target.Owns(m) {
				a.Node = m.Name
				recordPlan(m, o.Site, a.Plan)
			}
		}
		g.ReplaceAllUses(n.Output(0), out)
		g.RemoveNode(n)
	}
	return nil
}

// action is the fused action of site id.
func (c *Context) action(id int) *Action {
	for i := range c.Actions {
		if a := &c.Actions[i]; a.Fused && a.Site.ID == id {
			return a
		}
	}
	return nil
}
