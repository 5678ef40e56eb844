package passes

import (
	"errors"
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// Options configure a rewrite.
type Options struct {
	Target     string
	VerifyEach bool // run the graph verifier after every pass
}

// Action says what the rewrite did with one site.
type Action struct {
	Site    *Site
	Fused   bool
	Op      string // the fused op, "domain.Op"
	Node    string // the fused node's name
	Reason  string // why the site was left alone
	Created []string
}

// Context is the state the passes share.
type Context struct {
	Model       *graph.Model
	Opts        Options
	Target      Target
	Match       *Result
	Actions     []Action
	LayoutFolds int // Transpose/Reshape rewrites made by cleanup
	DeadRemoved int // nodes removed as dead code (the replaced sites among them)
}

// Pass is one step of the pipeline.
type Pass struct {
	Name string
	Run  func(*Context) error
}

// Pipeline is the pass table, in order.
var Pipeline = []Pass{
	{"match", matchPass},
	{"fuse", fusePass},
	{"cleanup-layout", cleanupPass},
	{"dead-code", deadCodePass},
	{"opset-import", opsetPass},
	{"sort", sortPass},
}

// Rewrite runs the pipeline over m in place.
func Rewrite(m *graph.Model, opts Options) (*Context, error) {
	if opts.Target == "" {
		opts.Target = "attnopt"
	}
	t, err := TargetByName(opts.Target)
	if err != nil {
		return nil, &ModelError{Msg: err.Error()}
	}
	if err := t.CheckModel(m); err != nil {
		return nil, err
	}
	c := &Context{Model: m, Opts: opts, Target: t}
	for _, p := range Pipeline {
		if err := p.Run(c); err != nil {
			return c, fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if opts.VerifyEach && p.Name != "fuse" {
			if err := m.Graph.Verify(); err != nil {
				return c, fmt.Errorf("graph invalid after pass %s: %w", p.Name, err)
			}
		}
	}
	return c, nil
}

func matchPass(c *Context) error {
	c.Match = FindSites(c.Model.Graph)
	return nil
}

// fusePass replaces every site the target accepts. A site the target cannot
// take is left as it was, with the reason.
func fusePass(c *Context) error {
	g := c.Model.Graph
	for _, s := range c.Match.Sites {
		a := Action{Site: s, Op: c.Target.Op()}
		if err := c.Target.CheckSite(s); err != nil {
			a.Reason = reasonOf(err)
			c.Actions = append(c.Actions, a)
			continue
		}
		readers, err := shapeReaders(s)
		if err != nil {
			a.Reason = err.Error()
			c.Actions = append(c.Actions, a)
			continue
		}
		before := len(g.Nodes)
		e := newEmitter(g, fmt.Sprintf("attnopt/site%d", s.ID))
		out, err := c.Target.Build(e, s)
		if err != nil {
			// Undo the nodes this site added; nothing of the original changed.
			for _, n := range append([]*graph.Node(nil), g.Nodes[before:]...) {
				g.RemoveNode(n)
			}
			g.RemoveDead()
			a.Reason = err.Error()
			c.Actions = append(c.Actions, a)
			continue
		}
		replaceShapeReaders(e, s, readers)
		rewireTypeOnly(s, out)
		g.ReplaceAllUses(s.Output, out)
		for _, n := range g.Nodes[before:] {
			if n.Domain != "" || n.OpType == "Attention" {
				a.Node = n.Name
			}
			a.Created = append(a.Created, n.Label())
		}
		a.Fused = true
		c.Actions = append(c.Actions, a)
		if c.Opts.VerifyEach {
			// Verify without reordering, so --verify-each never changes the
			// output bytes.
			if err := g.Verify(); err != nil {
				return fmt.Errorf("site %d: %w", s.ID, err)
			}
		}
	}
	return nil
}

func reasonOf(err error) string {
	var r *Reject
	if errors.As(err, &r) {
		return r.Reason
	}
	return err.Error()
}

func deadCodePass(c *Context) error {
	c.DeadRemoved += c.Model.Graph.RemoveDead()
	return nil
}

// opsetPass imports the fused op's domain when a site was fused.
func opsetPass(c *Context) error {
	for _, a := range c.Actions {
		if a.Fused {
			imp := c.Target.Import()
			if c.Model.Opset(imp.Domain) < imp.Version {
				c.Model.SetOpset(imp.Domain, imp.Version)
			}
			return nil
		}
	}
	return nil
}

func sortPass(c *Context) error { return c.Model.Graph.Sort() }

// FusedCount is the number of sites fused.
func (c *Context) FusedCount() int {
	n := 0
	for _, a := range c.Actions {
		if a.Fused {
			n++
		}
	}
	return n
}
