package passes

import (
	"errors"
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/cleanup"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/schema"
)

// Options configure a rewrite.
type Options struct {
	Target     string
	VerifyEach bool // run the graph verifier after every pass
	Approx     ApproxOptions
	// ZeroEmptyRows is a test hook: rows that see no key give zeros, as
	// before the canonical op stated the source's fills (rows.go), so a
	// test can show validation catches that.
	ZeroEmptyRows bool

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
	// CUDA is the kernel ONNX Runtime's CUDA execution provider runs for
	// the fused op (the first, when a site lowers to several).
	CUDA *CUDAPath
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
// "lift" is stage 1 (every site becomes attnopt.internal.SDPA with its
// adapters, canonical.go), "lower" stage 2 (the target's op, lower.go).
var Pipeline = []Pass{
	{"match", matchPass, nil},
	{"lift", liftPass, []string{"match"}},
	{"lower", lowerPass, []string{"lift"}},
	{"cleanup-layout", cleanupPass, []string{"lower"}},
	{"dead-code", deadCodePass, []string{"lift", "cleanup-layout"}},
	{"opset-import", opsetPass, []string{"lower"}},
	{"sort", sortPass, []string{"lower", "cleanup-layout", "dead-code"}},
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
	return run(m, opts, "")
}

// LiftOnly runs the pipeline up to and including stage 1 for the target: the
// graph holds attnopt.internal.SDPA nodes, which the pure-Go runtime
// evaluates, and must never be written to a file (tests validate stage 1
// with it).
func LiftOnly(m *graph.Model, opts Options) (*Context, error) {
	return run(m, opts, "lift")
}

func run(m *graph.Model, opts Options, stopAfter string) (*Context, error) {
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
	// A fused op ONNX Runtime refuses is refused here (lift_check.go), not
	// lifted into one that runs or written back as it was.
	if err := CheckRuntimeOps(m.Graph); err != nil {
		return nil, &ModelError{Msg: err.Error()}
	}
	c := &Context{Model: m, Opts: opts, Target: t}
	holders := subgraphHolders(m.Graph)
	for _, p := range Pipeline {
		if err := p.Run(c); err != nil {
			return c, fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if opts.VerifyEach && p.Name != "lift" {
			if err := verify(m.Graph); err != nil {
				return c, fmt.Errorf("graph invalid after pass %s: %w", p.Name, err)
			}
		}
		if p.Name == stopAfter {
			c.DeadRemoved += m.Graph.RemoveDead()
			return c, nil
		}
	}
	// Then attention inside If/Loop/Scan bodies and decoder subgraphs.
	if err := c.rewriteNested(holders); err != nil {
		return c, err
	}
	// Always verified before anyone writes it, --verify-each or not.
	if err := verify(m.Graph); err != nil {
		return c, fmt.Errorf("rewritten graph invalid: %w", err)
	}
	for _, n := range m.Graph.Nodes {
		if isCanonical(n) {
			return c, fmt.Errorf("rewritten graph invalid: %s %s was not lowered", opName(n), n.Label())
		}
	}
	return c, nil
}

// verify runs the graph verifier, the load-time shape checks (so a
// rewritten graph or subgraph is one attnopt would load) and every fused
// op's checked schema.
func verify(g *graph.Graph) error {
	if err := g.Verify(); err != nil {
		return err
	}
	if err := g.CheckShapes(); err != nil {
		return err
	}
	return schema.CheckFusedOps(g)
}

func matchPass(c *Context) error {
	c.Match = FindSites(c.Model.Graph)
	c.Opts.scope.place(c.Match)
	return nil
}

// liftPass replaces every site the target accepts with the canonical op
// (or, for a window plan, attnopt.WindowAttention). A site the target
// cannot take is left as it was, with the reason.
func liftPass(c *Context) error {
	for _, s := range c.Match.Sites {
		a := Action{Site: s, Op: c.Target.Op(), Plan: choosePlan(s, c.Opts.Approx)}
		build := func(e *emit.Emitter) (*graph.Value, error) { return liftSite(e, s, c.Opts.ZeroEmptyRows) }
		switch {
		case a.Plan.Approximate():
			if a.Plan.Kind == PlanWindow {
				a.Op = "attnopt.WindowAttention"
			}
			build = func(e *emit.Emitter) (*graph.Value, error) { return buildApprox(e, s, a.Plan) }
		case liftedSame(c.Target, s) != "":
			a.Reason, a.Kept = liftedSame(c.Target, s), true
			c.Actions = append(c.Actions, a)
			continue
		}
		if err := c.fuseWith(s, &a, build); err != nil {
			return err
		}
	}
	return nil
}

// fuseWith replaces one site with what build emits, or leaves it untouched
// with the reason when building fails or the target refuses a canonical
// node the build made.
func (c *Context) fuseWith(s *Site, a *Action, build func(e *emit.Emitter) (*graph.Value, error)) error {
	g := c.Model.Graph
	if why := schema.ScaleProblem(s.Scale); why != "" {
		a.Reason = why
		c.Actions = append(c.Actions, *a)
		return nil
	}
	readers, err := shapeReaders(s)
	if err != nil {
		a.Reason = err.Error()
		c.Actions = append(c.Actions, *a)
		return nil
	}
	before := len(g.Nodes)
	e := emit.New(g, sitePrefix(s.ID))
	// A lifted op's operands (com.microsoft.Attention's QKV projection) are
	// emitted by its prelude; a refused site gets its placeholders back.
	out, err := withPrelude(e, s, func(e *emit.Emitter) (*graph.Value, error) {
		out, err := build(e)
		if err == nil {
			err = c.accept(g.Nodes[before:], a)
		}
		return out, err
	})
	if err != nil {
		// Undo the nodes this site added; nothing of the original changed.
		for _, n := range append([]*graph.Node(nil), g.Nodes[before:]...) {
			g.RemoveNode(n)
		}
		g.RemoveDead()
		a.Reason = reasonOf(err)
		c.Actions = append(c.Actions, *a)
		return nil
	}
	replaceShapeReaders(e, s, readers)
	rewirePresent(e, s)
	rewireTypeOnly(s, out)
	g.ReplaceAllUses(s.Output, out)
	for _, n := range g.Nodes[before:] {
		if n.OpType == "WindowAttention" && n.Domain == "attnopt" {
			a.Node = n.Name
			recordPlan(n, s.ID, a.Plan)
		}
	}
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
		if !isCanonical(n) {
			continue
		}
		o := sdpaOf(n)
		if err := c.Target.Accept(o); err != nil {
			return err
		}
		if why := c.Target.Materialises(o); why != "" && !a.Plan.Approximate() {
			a.Warning, a.Plan.BytesAfter = why, a.Plan.BytesBefore
		}
		if a.CUDA == nil {
			p := c.Target.OnCUDA(o)
			a.CUDA = &p
		}
	}
	return nil
}

func sitePrefix(id int) string { return fmt.Sprintf("attnopt/site%d", id) }

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

func cleanupPass(c *Context) error {
	if c.FusedCount() == 0 {
		return nil // nothing replaced: the model is written as it was
	}
	folds, removed, err := cleanup.Layout(c.Model.Graph)
	c.LayoutFolds += folds
	c.DeadRemoved += removed
	return err
}

func isGraphOutput(g *graph.Graph, v *graph.Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

// CheckRuntimeOps runs the runtime checks over every node of g and of its
// subgraphs, at any depth; the error names the node (and the subgraph).
func CheckRuntimeOps(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if err := schema.CheckRuntimeOp(n); err != nil {
			return err
		}
		if !n.HasSubgraphs() {
			continue
		}
		subs, err := g.Subgraphs(n, nil)
		if err != nil {
			continue // not analysable: its attention is listed as such, never lifted
		}
		for _, s := range subs {
			if err := CheckRuntimeOps(s.Model.Graph); err != nil {
				return fmt.Errorf("in subgraph %s: %w", ScopePath("", n, s), err)
			}
		}
	}
	return nil
}

// CheckFusedOps runs the checked schema of every fused op in g
// (passes/schema/fused.go).
func CheckFusedOps(g *graph.Graph) error { return schema.CheckFusedOps(g) }
