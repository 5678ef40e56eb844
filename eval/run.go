package eval

import (
	"fmt"
	"runtime"
	"sort"

	"github.com/attnopt/attnopt/graph"
)

// Options control a run.
type Options struct {
	// Threads bounds the goroutines of parallel kernels; 0 means
	// runtime.NumCPU().
	Threads int
	// Trace, when set, sees every node's outputs as they are computed
	// (for debugging and for comparing intermediates).
	Trace func(n *graph.Node, outs []*Tensor)
}

// opCtx is what a kernel sees of its node.
type opCtx struct {
	node    *graph.Node
	opset   int64
	threads int
}

func (c *opCtx) attrInt(name string, def int64) int64 { return c.node.AttrInt(name, def) }
func (c *opCtx) attrFloat(name string, def float32) float32 {
	return c.node.AttrFloat(name, def)
}
func (c *opCtx) attrInts(name string) []int64 { return c.node.AttrInts(name) }
func (c *opCtx) attrString(name, def string) string {
	return c.node.AttrString(name, def)
}
func (c *opCtx) hasAttr(name string) bool { return c.node.Attr(name) != nil }

// kernel computes a node's outputs from its inputs (nil for omitted ones).
type kernel func(c *opCtx, in []*Tensor) ([]*Tensor, error)

var kernels = map[string]kernel{}

func opKey(domain, op string) string {
	return graph.CanonicalDomain(domain) + "\x00" + op
}

func register(domain, op string, k kernel) { kernels[opKey(domain, op)] = k }

func domainName(d string) string { return graph.DomainName(d) }

// Supports reports whether the runtime has a kernel for the node's op.
func Supports(n *graph.Node) bool {
	if n.OpType == "Constant" && graph.IsDefaultDomain(n.Domain) {
		return true
	}
	return kernels[opKey(n.Domain, n.OpType)] != nil
}

// UnsupportedOps lists "domain:Op" of every op in m the runtime cannot run.
func UnsupportedOps(m *graph.Model) []string {
	seen := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		if !Supports(n) {
			seen[domainName(n.Domain)+":"+n.OpType] = true
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Run executes m on the named inputs and returns every graph output by name.
// Intermediates are dropped after their last use.
func Run(m *graph.Model, inputs map[string]*Tensor, opts Options) (map[string]*Tensor, error) {
	g := m.Graph
	order, err := g.TopoOrder()
	if err != nil {
		return nil, err
	}
	feeds := map[string]*Tensor{}
	for _, in := range g.Inputs {
		t, ok := inputs[in.Name]
		if !ok {
			return nil, fmt.Errorf("missing input %q", in.Name)
		}
		if err := checkInput(in, t); err != nil {
			return nil, err
		}
		feeds[in.Name] = t
	}
	var want []string
	for _, o := range g.Outputs {
		want = append(want, o.Name)
	}
	return execute(m, order, feeds, want, opts)
}

// RunNodes executes a subset of m's nodes (in m's topological order) — an
// attention site, say — reading values they do not compute from feeds or
// from initializers, and returns the named values.
func RunNodes(m *graph.Model, nodes []*graph.Node, feeds map[string]*Tensor, want []string, opts Options) (map[string]*Tensor, error) {
	order, err := m.Graph.TopoOrder()
	if err != nil {
		return nil, err
	}
	in := map[*graph.Node]bool{}
	for _, n := range nodes {
		in[n] = true
	}
	var sub []*graph.Node
	for _, n := range order {
		if in[n] {
			sub = append(sub, n)
		}
	}
	if len(sub) != len(in) {
		return nil, fmt.Errorf("%d of the %d nodes are not in the model", len(in)-len(sub), len(in))
	}
	return execute(m, sub, feeds, want, opts)
}

func execute(m *graph.Model, order []*graph.Node, feeds map[string]*Tensor, want []string, opts Options) (map[string]*Tensor, error) {
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	for _, n := range order {
		if !Supports(n) {
			return nil, fmt.Errorf("unsupported op %s (domain %s, opset %d)", n.OpType, domainName(n.Domain), m.Opset(n.Domain))
		}
	}
	vals := map[string]*Tensor{}
	for name, t := range feeds {
		if t.DType == graph.Float16 || t.DType == graph.BFloat16 {
			// round a private copy: kernels may pass inputs through and
			// outputs are rounded in place, which must not touch the caller's
			t = t.Clone().normalize()
		}
		vals[name] = t
	}
	// Uses left per value; requested values are never freed.
	left := map[string]int{}
	keep := map[string]bool{}
	for _, name := range want {
		keep[name] = true
	}
	for _, n := range order {
		for _, v := range n.Inputs {
			if v != nil {
				left[v.Name]++
			}
		}
	}
	g := m.Graph
	get := func(name string) (*Tensor, error) {
		if t, ok := vals[name]; ok {
			return t, nil
		}
		if v := g.Value(name); v != nil && v.Kind == graph.KindInit && v.Const != nil {
			t, err := FromGraph(v.Const)
			if err != nil {
				return nil, fmt.Errorf("initializer %q: %w", v.Name, err)
			}
			vals[v.Name] = t
			return t, nil
		}
		return nil, fmt.Errorf("value %q is neither fed nor computed", name)
	}
	for _, n := range order {
		in := make([]*Tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v == nil || v.Name == "" {
				continue
			}
			t, err := get(v.Name)
			if err != nil {
				return nil, fmt.Errorf("node %s: %w", n.Label(), err)
			}
			in[i] = t
		}
		var outs []*Tensor
		var err error
		switch {
		case n.Is("If"):
			outs, err = runIf(m, n, in[0], get, opts)
		case n.Is("Loop"):
			outs, err = runLoop(m, n, in, get, opts)
		default:
			outs, err = runNode(m, n, in, threads)
		}
		if err != nil {
			return nil, fmt.Errorf("node %s (%s): %w", n.Label(), n.OpType, err)
		}
		for i, v := range n.Outputs {
			if v == nil || v.Name == "" {
				continue
			}
			if i >= len(outs) || outs[i] == nil {
				return nil, fmt.Errorf("node %s (%s): output %d (%q) is not produced", n.Label(), n.OpType, i, v.Name)
			}
			vals[v.Name] = roundOutput(n, in, outs[i])
		}
		if opts.Trace != nil {
			opts.Trace(n, outs)
		}
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			left[v.Name]--
			if left[v.Name] == 0 && !keep[v.Name] && !readBySubgraph(v) {
				delete(vals, v.Name)
			}
		}
	}
	res := map[string]*Tensor{}
	for _, name := range want {
		t, err := get(name)
		if err != nil {
			return nil, err
		}
		res[name] = t
	}
	return res, nil
}

// runNode calls the node's kernel; a kernel panic (a malformed model that
// slipped past its checks) becomes an error instead of killing the tool.
func runNode(m *graph.Model, n *graph.Node, in []*Tensor, threads int) (outs []*Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	if n.OpType == "Constant" && graph.IsDefaultDomain(n.Domain) {
		t, err := constantNode(n)
		return []*Tensor{t}, err
	}
	c := &opCtx{node: n, opset: m.Opset(n.Domain), threads: threads}
	return kernels[opKey(n.Domain, n.OpType)](c, in)
}

func checkInput(v *graph.Value, t *Tensor) error {
	if t == nil {
		return fmt.Errorf("input %q is nil", v.Name)
	}
	if v.Type.DType != graph.Undefined && v.Type.DType != t.DType {
		return fmt.Errorf("input %q: got %s, model declares %s", v.Name, t.DType, v.Type.DType)
	}
	n := t.Numel()
	switch storageOf(t.DType) {
	case stFloat:
		if len(t.F) != n {
			return fmt.Errorf("input %q: %s%v needs %d float values, has %d", v.Name, t.DType, t.Shape, n, len(t.F))
		}
	case stInt:
		if len(t.I) != n {
			return fmt.Errorf("input %q: %s%v needs %d int values, has %d", v.Name, t.DType, t.Shape, n, len(t.I))
		}
	default:
		if len(t.B) != n {
			return fmt.Errorf("input %q: %s%v needs %d bool values, has %d", v.Name, t.DType, t.Shape, n, len(t.B))
		}
	}
	if v.Type.Ranked {
		if len(v.Type.Shape) != len(t.Shape) {
			return fmt.Errorf("input %q: got shape %v, model declares %s", v.Name, t.Shape, v.Type.Shape)
		}
		for i, d := range v.Type.Shape {
			if x, ok := d.Value(); ok && int(x) != t.Shape[i] {
				return fmt.Errorf("input %q: got shape %v, model declares %s", v.Name, t.Shape, v.Type.Shape)
			}
		}
	}
	return nil
}

// constantNode evaluates a Constant node's attribute.
func constantNode(n *graph.Node) (*Tensor, error) {
	for _, a := range n.Attrs {
		switch a.Name {
		case "value":
			return FromGraph(a.T)
		case "value_float":
			return FromFloats(nil, []float32{a.F}), nil
		case "value_floats":
			return FromFloats([]int{len(a.Floats)}, append([]float32{}, a.Floats...)), nil
		case "value_int":
			return FromInts(nil, []int64{a.I}), nil
		case "value_ints":
			return FromInts([]int{len(a.Ints)}, append([]int64{}, a.Ints...)), nil
		}
	}
	return nil, fmt.Errorf("Constant without a supported value attribute")
}

// needFloat rejects non-float operands of float-only kernels (nil
// entries are omitted optionals).
func needFloat(ts ...*Tensor) error {
	for i, t := range ts {
		if t != nil && t.F == nil {
			return fmt.Errorf("input %d must be a float tensor, got %s", i, t.DType)
		}
	}
	return nil
}

// readBySubgraph reports whether a subgraph attribute reads v (If branches
// look it up when they run), so it must not be freed early.
func readBySubgraph(v *graph.Value) bool {
	for _, u := range v.Uses() {
		if u.Index < 0 {
			return true
		}
	}
	return false
}
