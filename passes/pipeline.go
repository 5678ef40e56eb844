// Package passes rewrites the attention of a model: the pass table below
// runs the floors of passes/ in order. match (passes/match) binds every
// site into an immutable Match; plan (passes/plan) decides each site's
// plan; stage 1 (passes/canonical) builds canonical ops from the Match and
// plan; stage 2 (passes/lower) lowers them into the target's op; cleanup
// (passes/cleanup) cancels the layout adapters of both stages. This
// package is the thin public entry (Rewrite, Options, FindSites, the
// aliases in api_*.go); no floor imports one above it
// (passes/layers_test.go).
package passes

import (
	"fmt"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/steporder"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/schema"
)

// Options configure a rewrite.
type Options struct {
	Target     string
	VerifyEach bool // run the graph verifier after every pass
	Approx     ApproxOptions
	// ZeroEmptyRows is a test hook: rows that see no key give zeros, as
	// before the canonical op stated the source's fills (passes/match/resolve/rows.go),
	// so a test can show validation catches that.
	ZeroEmptyRows bool
	// MinScores (bytes; 0 = none) leaves exact sites whose score tensor is
	// known and smaller alone (rewrite --min-scores; plan.BelowMinScores).
	MinScores int64
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
	// Reject is that reason, typed: its code and the node or value at
	// fault (nil when the site was fused or kept).
	Reject *Reject
	// Warning says why the fused op still materialises the scores in the
	// target's runtime (Plan.BytesAfter then counts them).
	Warning string
	// CUDA is the kernel ONNX Runtime's CUDA execution provider runs for
	// the fused op (the first, when a site lowers to several).
	CUDA *CUDAPath
}

// Context is the state the passes share.
type Context struct {
	Model   *graph.Model
	Opts    Options
	Target  Target
	Match   *Result
	Actions []Action
	// Passes records each pass of this run, in order, with what it did.
	Passes []PassStats
	// LayoutFolds and DeadRemoved total the pass records (subgraphs'
	// included).
	LayoutFolds int
	DeadRemoved int

	stat    *PassStats    // the running pass's record
	path    string        // the subgraph this context rewrites ("" for the main graph)
	holders []*graph.Node // nodes with subgraphs, as the match pass saw them
	model   *modelState   // shared by the main graph and every subgraph of one model
}

// modelState is what every subgraph's rewrite of one model shares: the
// next site ID, and the names every scope uses (a fused node or value in a
// subgraph never takes a name used elsewhere).
type modelState struct {
	next     int
	reserved map[string]bool
}

// Pass is one step of the pipeline: one row of the table.
type Pass struct {
	Name string
	Run  func(*Context) error
	// After names the passes that must run before this one.
	After []string
	// Verify: with --verify-each the graph verifier runs after this pass.
	// lift leaves its new nodes unsorted and verifies each site instead.
	Verify bool
}

// PassStats is what one pass did in one run.
type PassStats struct {
	Name     string
	Folds    int // layout rewrites (cleanup-layout)
	Removed  int // nodes removed as dead code
	Verified bool
	Elapsed  time.Duration
}

// Pipeline is the pass table, in order; checkOrder proves the order at init.
// "lift" is stage 1 (every site becomes canonical ops with their adapters,
// passes/canonical), "lower" stage 2 (the target's op, passes/lower);
// "nested" runs the table on every subgraph; "verify" checks what would be
// written, --verify-each or not.
var Pipeline = []Pass{
	{Name: "match", Run: matchPass, Verify: true},
	{Name: "lift", Run: liftPass, After: []string{"match"}},
	{Name: "lower", Run: lowerPass, After: []string{"lift"}, Verify: true},
	{Name: "cleanup-layout", Run: cleanupPass, After: []string{"lower"}, Verify: true},
	{Name: "dead-code", Run: deadCodePass, After: []string{"lift", "cleanup-layout"}, Verify: true},
	{Name: "opset-import", Run: opsetPass, After: []string{"lower"}, Verify: true},
	{Name: "sort", Run: sortPass, After: []string{"lower", "cleanup-layout", "dead-code"}, Verify: true},
	{Name: "nested", Run: nestedPass, After: []string{"sort"}},
	{Name: "verify", Run: verifyPass, After: []string{"nested"}},
}

// table is Pipeline as runTable reads it (set at init: the nested row
// runs the table itself).
var table []Pass

func init() {
	if err := checkOrder(Pipeline); err != nil {
		panic(err)
	}
	table = Pipeline
}

// checkOrder says which pass runs before one it needs, or names twice.
func checkOrder(table []Pass) error {
	return steporder.Check("pass table", table, func(p Pass) string { return p.Name }, func(p Pass) []string { return p.After })
}

// Rewrite runs the pipeline over m in place.
func Rewrite(m *graph.Model, opts Options) (*Context, error) {
	return run(m, opts, "")
}

// LiftOnly runs the pipeline up to and including stage 1 for the target: the
// graph holds canonical nodes, which the pure-Go runtime evaluates, and
// must never be written to a file (tests validate stage 1 with it).
func LiftOnly(m *graph.Model, opts Options) (*Context, error) {
	return run(m, opts, "lift")
}

func run(m *graph.Model, opts Options, stopAfter string) (*Context, error) {
	if opts.Target == "" {
		opts.Target = "attnopt"
	}
	t, err := TargetByName(opts.Target)
	if err != nil {
		return nil, &ModelError{Msg: err.Error(), Err: err}
	}
	if err := t.CheckModel(m); err != nil {
		return nil, err
	}
	// A fused op ONNX Runtime refuses is refused here (passes/schema/runtime.go),
	// not lifted into one that runs or written back as it was.
	if err := CheckRuntimeOps(m.Graph); err != nil {
		return nil, &ModelError{Msg: err.Error(), Err: err}
	}
	c := &Context{Model: m, Opts: opts, Target: t, model: &modelState{}}
	return c, c.runTable(stopAfter)
}

// runTable runs the pass table on c's graph, stopping after the pass named
// stopAfter ("" for none).
func (c *Context) runTable(stopAfter string) error {
	defer c.total()
	for _, p := range table {
		c.Passes = append(c.Passes, PassStats{Name: p.Name})
		c.stat = &c.Passes[len(c.Passes)-1]
		start := time.Now()
		err := p.Run(c)
		c.stat.Elapsed = time.Since(start)
		if err != nil {
			return fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if c.Opts.VerifyEach && p.Verify {
			if err := verify(c.Model.Graph); err != nil {
				return fmt.Errorf("graph invalid after pass %s: %w", p.Name, err)
			}
			c.stat.Verified = true
		}
		if p.Name == stopAfter {
			c.stat.Removed += c.Model.Graph.RemoveDead()
			return nil
		}
	}
	return nil
}

// total sums the pass records into LayoutFolds and DeadRemoved.
func (c *Context) total() {
	c.LayoutFolds, c.DeadRemoved = 0, 0
	for _, p := range c.Passes {
		c.LayoutFolds += p.Folds
		c.DeadRemoved += p.Removed
	}
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

// verifyPass checks the graph before anyone writes it, --verify-each or
// not: valid, and no canonical op left.
func verifyPass(c *Context) error {
	g := c.Model.Graph
	if err := verify(g); err != nil {
		return fmt.Errorf("rewritten graph invalid: %w", err)
	}
	for _, n := range g.Nodes {
		if canonical.IsCanonical(n) {
			return fmt.Errorf("rewritten graph invalid: %s %s was not lowered", match.OpName(n), n.Label())
		}
	}
	c.stat.Verified = true
	return nil
}

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

// CheckFusedOps runs the checked schema of every fused op in g
// (passes/schema/fused.go).
func CheckFusedOps(g *graph.Graph) error { return schema.CheckFusedOps(g) }

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
				return fmt.Errorf("in subgraph %s: %w", match.ScopePath("", n, s), err)
			}
		}
	}
	return nil
}
