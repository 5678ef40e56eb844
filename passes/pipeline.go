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
	Approx     ApproxOptions

	scope *nestScope // set when rewriting a subgraph (passes/rewrite_nested.go)
}

// Action says what the rewrite did with one site.
type Action struct {
	Site  *Site
	Plan  *Plan
	Fused bool
	// Kept marks a lifted site whose op already is the target's op.
	Kept   bool
	Op     string // the fused op, "domain.Op"
	Node   string // the fused node's name
	Reason string // why the site was left alone
	// Warning says why the fused op still materialises the scores in the
	// target's runtime (Plan.BytesAfter then counts them).
	Warning string
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
	// After names the passes that must run before this one.
	After []string
}

// Pipeline is the pass table, in order; checkOrder proves the order at init.
var Pipeline = []Pass{
	{"match", matchPass, nil},
	{"fuse", fusePass, []string{"match"}},
	{"cleanup-layout", cleanupPass, []string{"fuse"}},
	{"dead-code", deadCodePass, []string{"fuse", "cleanup-layout"}},
	{"opset-import", opsetPass, []string{"fuse"}},
	{"sort", sortPass, []string{"fuse", "cleanup-layout", "dead-code"}},
}

func init() {
	if err := checkOrder(Pipeline); err != nil {
		panic(err)
	}
}

// checkOrder says which pass runs before one it needs, or names twice.
func checkOrder(table []Pass) error {
	seen := map[string]bool{}
	for _, p := range table {
		if seen[p.Name] {
			return fmt.Errorf("pass table: %q listed twice", p.Name)
		}
		for _, a := range p.After {
			if !seen[a] {
				return fmt.Errorf("pass table: %q must run after %q", p.Name, a)
			}
		}
		seen[p.Name] = true
	}
	return nil
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
	holders := subgraphHolders(m.Graph)
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
	// Then attention inside If/Loop/Scan bodies and decoder subgraphs.
	if err := c.rewriteNested(holders); err != nil {
		return c, err
	}
	// Always verified before anyone writes it, --verify-each or not.
	if err := m.Graph.Verify(); err != nil {
		return c, fmt.Errorf("rewritten graph invalid: %w", err)
	}
	if err := CheckFusedOps(m.Graph); err != nil {
		return c, fmt.Errorf("rewritten graph invalid: %w", err)
	}
	return c, nil
}

func matchPass(c *Context) error {
	c.Match = FindSites(c.Model.Graph)
	c.Opts.scope.place(c.Match)
	return nil
}

// fusePass replaces every site the target accepts. A site the target cannot
// take is left as it was, with the reason.
func fusePass(c *Context) error {
	for _, s := range c.Match.Sites {
		a := Action{Site: s, Op: c.Target.Op(), Plan: choosePlan(s, c.Opts.Approx)}
		if a.Plan.Approximate() {
			if a.Plan.Kind == PlanWindow {
				a.Op = "attnopt.WindowAttention"
			}
			if err := c.fuseWith(s, &a, func(e *emitter) (*graph.Value, error) { return buildApprox(e, c.Target, s, a.Plan) }); err != nil {
				return err
			}
			continue
		}
		if why := liftedSame(c.Target, s); why != "" {
			a.Reason, a.Kept = why, true
			c.Actions = append(c.Actions, a)
			continue
		}
		if err := c.Target.CheckSite(s); err != nil {
			a.Reason = reasonOf(err)
			c.Actions = append(c.Actions, a)
			continue
		}
		if why := c.Target.Materialises(s); why != "" {
			a.Warning, a.Plan.BytesAfter = why, a.Plan.BytesBefore
		}
		if err := c.fuseWith(s, &a, func(e *emitter) (*graph.Value, error) { return c.Target.Build(e, s) }); err != nil {
			return err
		}
	}
	return nil
}

// fuseWith replaces one site with what build emits, or leaves it untouched
// with the reason when building fails.
func (c *Context) fuseWith(s *Site, a *Action, build func(e *emitter) (*graph.Value, error)) error {
	g := c.Model.Graph
	readers, err := shapeReaders(s)
	if err != nil {
		a.Reason = err.Error()
		c.Actions = append(c.Actions, *a)
		return nil
	}
	before := len(g.Nodes)
	e := newEmitter(g, fmt.Sprintf("attnopt/site%d", s.ID))
	out, err := build(e)
	if err != nil {
		// Undo the nodes this site added; nothing of the original changed.
		for _, n := range append([]*graph.Node(nil), g.Nodes[before:]...) {
			g.RemoveNode(n)
		}
		g.RemoveDead()
		a.Reason = err.Error()
		c.Actions = append(c.Actions, *a)
		return nil
	}
	replaceShapeReaders(e, s, readers)
	rewirePresent(e, s)
	rewireTypeOnly(s, out)
	g.ReplaceAllUses(s.Output, out)
	for _, n := range g.Nodes[before:] {
		if n.Domain != "" || n.OpType == "Attention" {
			a.Node = n.Name
		}
	}
	a.Fused = true
	c.Actions = append(c.Actions, *a)
	if c.Opts.VerifyEach {
		// Verify without reordering, so --verify-each never changes the
		// output bytes.
		if err := g.Verify(); err != nil {
			return fmt.Errorf("site %d: %w", s.ID, err)
		}
		if err := CheckFusedOps(g); err != nil {
			return fmt.Errorf("site %d: %w", s.ID, err)
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
	if c.FusedCount() == 0 {
		return nil
	}
	c.DeadRemoved += c.Model.Graph.RemoveDead()
	return nil
}

// opsetPass imports the domains of the ops the fused sites use.
func opsetPass(c *Context) error {
	for _, a := range c.Actions {
		if !a.Fused {
			continue
		}
		imp := c.Target.Import()
		if a.Plan != nil && a.Plan.Kind == PlanWindow {
			imp = graph.Opset{Domain: "attnopt", Version: 1}
		}
		if c.Model.Opset(imp.Domain) < imp.Version {
			c.Model.SetOpset(imp.Domain, imp.Version)
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
