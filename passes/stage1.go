package passes

import (
	"errors"
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/lower"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/plan"
)

// The match and lift rows: the rule set binds every site (passes/match),
// the planner picks its plan (passes/plan), and stage 1 builds it
// (passes/canonical) where the target accepts every canonical op built.

func matchPass(c *Context) error {
	g := c.Model.Graph
	c.holders = match.SubgraphHolders(g)
	c.Match = match.Find(g, match.Scope{Path: c.path, Next: c.model.next})
	c.model.next += len(c.Match.Sites)
	return nil
}

// liftPass replaces every site the target accepts with canonical ops and
// their adapters. A site the target cannot take is left as it was, with
// the reason.
func liftPass(c *Context) error {
	for _, s := range c.Match.Sites {
		a := Action{Site: s, Op: c.Target.Op(), Plan: plan.Choose(s, c.Opts.Approx)}
		if why := plan.BelowMinScores(a.Plan, c.Opts.MinScores); why != "" {
			a.Reason = why
			c.Actions = append(c.Actions, a)
			continue
		}
		if a.Plan.Kind == plan.Window && c.Target.WindowOp() != "" {
			a.Op = c.Target.WindowOp()
		}
		if why := liftedSame(c.Target, s); why != "" && !a.Plan.Approximate() {
			a.Reason, a.Kept = why, true
			c.Actions = append(c.Actions, a)
			continue
		}
		if err := c.fuse(s, &a); err != nil {
			return err
		}
	}
	return nil
}

// liftedSame says why a target leaves a lifted site alone: its op already
// is the target's op.
func liftedSame(t Target, s *Site) string {
	if s.Lifted == nil || match.OpName(s.Lifted) != t.Op() {
		return ""
	}
	return fmt.Sprintf("already %s, the --target %s op", t.Op(), t.Name())
}

// fuse replaces one site with what stage 1 builds for its plan, or leaves
// it untouched with the reason when building fails or the target refuses a
// canonical node the build made.
func (c *Context) fuse(s *Site, a *Action) error {
	g := c.Model.Graph
	if rj := canonical.Check(s); rj != nil {
		a.Reason, a.Reject = rj.Reason, rj
		c.Actions = append(c.Actions, *a)
		return nil
	}
	before := len(g.Nodes)
	e := emit.New(g, sitePrefix(s.ID))
	rep, err := canonical.Build(e, s, a.Plan, c.Opts.ZeroEmptyRows)
	if err == nil {
		err = c.accept(g.Nodes[before:], a)
	}
	if err != nil {
		// Undo the nodes this site added; nothing of the original changed.
		for _, n := range append([]*graph.Node(nil), g.Nodes[before:]...) {
			g.RemoveNode(n)
		}
		g.RemoveDead()
		a.Reason, a.Reject = reasonOf(err)
		c.Actions = append(c.Actions, *a)
		return nil
	}
	rep.Apply(e)
	a.Fused = true
	c.Actions = append(c.Actions, *a)
	if c.Opts.VerifyEach {
		// Verify without reordering, so --verify-each never changes the
		// output bytes.
		if err := verify(g); err != nil {
			return fmt.Errorf("site %d: %w", s.ID, err)
		}
	}
	return nil
}

// accept asks the target about every canonical node a site's build added
// and notes whether the target's op still materialises the scores.
func (c *Context) accept(added []*graph.Node, a *Action) error {
	for _, n := range added {
		if !canonical.IsCanonical(n) {
			continue
		}
		o, err := canonical.Of(n)
		if err != nil {
			return err
		}
		if err := lower.Admit(c.Target, o); err != nil {
			return err
		}
		if why := c.Target.Materialises(o); why != "" && !a.Plan.Approximate() {
			a.Warning, a.Plan.BytesAfter = why, a.Plan.BytesBefore
		}
		// The CUDA kernel choice is stated for exact ops (passes/lower/cuda.go).
		if a.CUDA == nil && o.Windowed == nil {
			p := c.Target.OnCUDA(o)
			a.CUDA = &p
		}
	}
	return nil
}

func sitePrefix(id int) string { return fmt.Sprintf("attnopt/site%d", id) }

// reasonOf is an error as the reason a site stays: the Reject it is (its
// code and the node at fault kept), or one made from its text.
func reasonOf(err error) (string, *Reject) {
	var r *Reject
	if errors.As(err, &r) {
		return r.Reason, r
	}
	return err.Error(), &Reject{Code: match.CodeTarget, Reason: err.Error(), Err: err}
}
