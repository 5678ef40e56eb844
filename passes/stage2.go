package passes

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/cleanup"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/plan"
)

// The rows after stage 1: lower (stage 2), layout cleanup, dead code,
// opset imports and the final sort.

// lowerPass is stage 2: the target lowers every canonical node stage 1
// left (it accepted each one then) into its own op, which records the site
// id and plan for validate and report.
func lowerPass(c *Context) error {
	g := c.Model.Graph
	for _, n := range append([]*graph.Node(nil), g.Nodes...) {
		if !canonical.IsCanonical(n) {
			continue
		}
		o, err := canonical.Of(n)
		if err != nil {
			return err
		}
		a := c.action(o.Site)
		if a == nil {
			return fmt.Errorf("%s %s names site %d, which stage 1 did not fuse", match.OpName(n), n.Label(), o.Site)
		}
		before := len(g.Nodes)
		out, err := c.Target.Lower(emit.New(g, sitePrefix(o.Site)), o)
		if err != nil {
			return fmt.Errorf("site %d: %s accepted the site but cannot lower it: %w", o.Site, c.Target.Name(), err)
		}
		for _, m := range g.Nodes[before:] {
			if c.Target.Owns(m) {
				a.Node = m.Name
				plan.Record(m, o.Site, a.Plan)
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

func cleanupPass(c *Context) error {
	if c.FusedCount() == 0 {
		return nil // nothing replaced: the model is written as it was
	}
	folds, removed, err := cleanup.Layout(c.Model.Graph)
	c.stat.Folds += folds
	c.stat.Removed += removed
	return err
}

func deadCodePass(c *Context) error {
	if c.FusedCount() == 0 {
		return nil
	}
	c.stat.Removed += c.Model.Graph.RemoveDead()
	return nil
}

// opsetPass imports the domains of the ops the fused sites use.
func opsetPass(c *Context) error {
	if c.FusedCount() == 0 {
		return nil
	}
	imp := c.Target.Import()
	if c.Model.Opset(imp.Domain) < imp.Version {
		c.Model.SetOpset(imp.Domain, imp.Version)
	}
	return nil
}

func sortPass(c *Context) error { return c.Model.Graph.Sort() }
