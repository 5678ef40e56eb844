package graph

import (
	"fmt"
	"sort"
	"strconv"
)

// TopoOrder returns the nodes in a topological order that keeps the file's
// order wherever the file is already sorted; it fails on a cycle.
func (g *Graph) TopoOrder() ([]*Node, error) {
	pos := make(map[*Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		pos[n] = i
	}
	indeg := make([]int, len(g.Nodes))
	for i, n := range g.Nodes {
		for _, v := range n.deps() {
			if p := v.producer; p != nil {
				if _, ok := pos[p]; ok {
					indeg[i]++
				}
			}
		}
	}
	// Ready nodes are taken lowest file position first, which makes the
	// order deterministic and the identity on sorted graphs.
	ready := &intHeap{}
	for i, d := range indeg {
		if d == 0 {
			ready.push(i)
		}
	}
	out := make([]*Node, 0, len(g.Nodes))
	for ready.len() > 0 {
		i := ready.pop()
		n := g.Nodes[i]
		out = append(out, n)
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			for _, u := range o.uses {
				j, ok := pos[u.Node]
				if !ok {
					continue
				}
				indeg[j]--
				if indeg[j] == 0 {
					ready.push(j)
				}
			}
		}
	}
	if len(out) != len(g.Nodes) {
		for i, d := range indeg {
			if d > 0 {
				return nil, fmt.Errorf("graph has a cycle through node %q", g.Nodes[i].Label())
			}
		}
	}
	return out, nil
}

// deps lists the values a node reads, subgraph reads included, each once per
// input slot (duplicates counted so in-degree matches the use lists).
func (n *Node) deps() []*Value {
	out := make([]*Value, 0, len(n.Inputs)+len(n.outer))
	for _, v := range n.Inputs {
		if v != nil {
			out = append(out, v)
		}
	}
	return append(out, n.outer...)
}

// Sort puts the nodes in topological order (see TopoOrder).
func (g *Graph) Sort() error {
	order, err := g.TopoOrder()
	if err != nil {
		return err
	}
	g.Nodes = order
	return nil
}

type intHeap struct{ xs []int }

func (h *intHeap) len() int { return len(h.xs) }
func (h *intHeap) push(x int) {
	h.xs = append(h.xs, x)
	for i := len(h.xs) - 1; i > 0; {
		p := (i - 1) / 2
		if h.xs[p] <= h.xs[i] {
			break
		}
		h.xs[p], h.xs[i] = h.xs[i], h.xs[p]
		i = p
	}
}
func (h *intHeap) pop() int {
	top := h.xs[0]
	last := len(h.xs) - 1
	h.xs[0] = h.xs[last]
	h.xs = h.xs[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.xs) && h.xs[l] < h.xs[m] {
			m = l
		}
		if r < len(h.xs) && h.xs[r] < h.xs[m] {
			m = r
		}
		if m == i {
			break
		}
		h.xs[i], h.xs[m] = h.xs[m], h.xs[i]
		i = m
	}
	return top
}

// UniqueName returns base, or base_N, that no value or node uses yet.
func (g *Graph) UniqueName(base string) string {
	if base == "" {
		base = "v"
	}
	taken := func(s string) bool {
		// Names defined inside subgraphs are taken too: ONNX names are
		// single-assignment across a graph and its subgraphs; so are those
		// of the scopes a wrapped subgraph sits in.
		for x := g; x != nil; x = x.enclosing {
			if x.values[s] != nil || x.subNames[s] || x.reserved[s] {
				return true
			}
			for _, n := range x.Nodes {
				if n.Name == s {
					return true
				}
			}
		}
		return false
	}
	if !taken(base) {
		return base
	}
	for i := 1; ; i++ {
		s := base + "_" + strconv.Itoa(i)
		if !taken(s) {
			return s
		}
	}
}

// NewValue creates an unattached value with a unique name.
func (g *Graph) NewValue(base string, t Type) *Value {
	v := &Value{Name: g.UniqueName(base), Kind: KindNode, Type: t}
	g.values[v.Name] = v
	return v
}

// AddInit adds an initializer holding t under a unique name.
func (g *Graph) AddInit(base string, t *Tensor) *Value {
	v := &Value{Name: g.UniqueName(base), Kind: KindInit, Const: t, Type: TensorOf(t.DType, StaticShape(t.Dims...))}
	t.Name = v.Name
	g.values[v.Name] = v
	g.Inits = append(g.Inits, v)
	return v
}

// AddNode appends a node reading inputs and writing outputs (which must be
// unproduced values of g). Call Sort before saving.
func (g *Graph) AddNode(op, domain, name string, inputs, outputs []*Value, attrs ...*Attr) *Node {
	n := &Node{OpType: op, Domain: domain, Inputs: inputs, Outputs: outputs, Attrs: attrs}
	if name != "" {
		n.Name = g.UniqueName(name)
	}
	for i, v := range inputs {
		if v != nil {
			v.uses = append(v.uses, Use{Node: n, Index: i})
		}
	}
	for i, v := range outputs {
		if v != nil {
			if v.producer != nil {
				panic(fmt.Sprintf("graph: value %q already produced by %q", v.Name, v.producer.Label()))
			}
			v.producer, v.outIndex = n, i
		}
	}
	g.Nodes = append(g.Nodes, n)
	return n
}

// SetInput rewires input slot i of n to v.
func (n *Node) SetInput(i int, v *Value) {
	if old := n.Inputs[i]; old != nil {
		old.removeUse(n, i)
	}
	n.Inputs[i] = v
	if v != nil {
		v.uses = append(v.uses, Use{Node: n, Index: i})
	}
}

func (v *Value) removeUse(n *Node, i int) {
	for k, u := range v.uses {
		if u.Node == n && u.Index == i {
			v.uses = append(v.uses[:k], v.uses[k+1:]...)
			return
		}
	}
}

// ReplaceAllUses makes every reader of old (nodes, subgraphs and graph
// outputs) read nw instead. A graph output keeps its name: nw is renamed to
// old's name when old was an output, so the model's interface is unchanged.
//
// A subgraph (If/Loop body) reads old by name, so old's name must survive
// too: nw takes it, or, when nw cannot be renamed (a graph input,
// initializer or output, or a name a subgraph already reads), an Identity
// of nw takes it.
func (g *Graph) ReplaceAllUses(old, nw *Value) {
	outer := false
	for _, u := range old.uses {
		outer = outer || u.Index < 0
	}
	rename := g.isOutput(old)
	if outer && !rename {
		if !g.renamable(nw) {
			id := g.NewValue(nw.Name+"_ref", nw.Type)
			g.AddNode("Identity", "", "", []*Value{nw}, []*Value{id})
			nw = id
		}
		rename = true
	}
	for _, u := range append([]Use(nil), old.uses...) {
		if u.Index >= 0 {
			u.Node.SetInput(u.Index, nw)
		} else {
			for k, o := range u.Node.outer {
				if o == old {
					u.Node.outer[k] = nw
				}
			}
			old.removeUse(u.Node, -1)
			nw.uses = append(nw.uses, u)
		}
	}
	for i, o := range g.Outputs {
		if o == old {
			g.Outputs[i] = nw
		}
	}
	if rename {
		g.swapNames(old, nw)
	}
}

// renamable: v can take another name without changing the model's
// interface or a subgraph's reference.
func (g *Graph) renamable(v *Value) bool {
	if v.Kind != KindNode || g.isOutput(v) {
		return false
	}
	for _, u := range v.uses {
		if u.Index < 0 {
			return false
		}
	}
	return true
}

// swapNames gives nw the name old had (old takes a fresh name), so graph
// outputs and subgraph references keep working.
func (g *Graph) swapNames(old, nw *Value) {
	oldName := old.Name
	delete(g.values, old.Name)
	delete(g.values, nw.Name)
	old.Name = g.UniqueName(oldName + "_replaced")
	g.values[old.Name] = old
	nw.Name = oldName
	nw.info = old.info
	g.values[nw.Name] = nw
}

// detach removes n from the use lists of the values it reads.
func (n *Node) detach() {
	for i, v := range n.Inputs {
		if v != nil {
			v.removeUse(n, i)
		}
	}
	for _, v := range n.outer {
		v.removeUse(n, -1)
	}
}

// RemoveNode detaches n; its outputs must be unused.
func (g *Graph) RemoveNode(n *Node) {
	n.detach()
	for _, o := range n.Outputs {
		if o != nil {
			o.producer = nil
			// An alias (a name a file defines twice, load.go) is not the
			// registered value: removing it leaves the name's entry.
			if len(o.uses) == 0 && !g.isOutput(o) && g.values[o.Name] == o {
				delete(g.values, o.Name)
			}
		}
	}
	for i, m := range g.Nodes {
		if m == n {
			g.Nodes = append(g.Nodes[:i], g.Nodes[i+1:]...)
			break
		}
	}
}

func (g *Graph) isOutput(v *Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

// RemoveDead deletes nodes whose outputs nobody reads and initializers no
// node reads; graph inputs always stay. Returns the number of nodes removed.
func (g *Graph) RemoveDead() int {
	live := map[*Node]bool{}
	var stack []*Value
	stack = append(stack, g.Outputs...)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p := v.producer
		if p == nil || live[p] {
			continue
		}
		live[p] = true
		stack = append(stack, p.deps()...)
	}
	removed := 0
	kept := g.Nodes[:0]
	var dead []*Node
	for _, n := range g.Nodes {
		if live[n] {
			kept = append(kept, n)
		} else {
			dead = append(dead, n)
		}
	}
	g.Nodes = kept
	for _, n := range dead {
		n.detach()
		for _, o := range n.Outputs {
			if o != nil {
				o.producer = nil
				if g.values[o.Name] == o { // not an alias's name (RemoveNode)
					delete(g.values, o.Name)
				}
			}
		}
		removed++
	}
	inits := g.Inits[:0]
	for _, v := range g.Inits {
		if len(v.uses) > 0 || g.isOutput(v) || g.initInputs[v.Name] {
			inits = append(inits, v)
		} else {
			delete(g.values, v.Name)
		}
	}
	g.Inits = inits
	return removed
}

// SortedValueNames is every value name in sorted order (for stable dumps).
func (g *Graph) SortedValueNames() []string {
	names := make([]string, 0, len(g.values))
	for k := range g.values {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
