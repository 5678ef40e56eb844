package graph

import (
	"fmt"

	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Verify checks the invariants passes must keep: every value read is defined
// exactly once, the graph is acyclic, outputs are computed, use lists match
// the nodes, and the operands of type-preserving ops agree on dtype.
func (g *Graph) Verify() error {
	produced := map[*Value]*Node{}
	inGraph := map[*Node]bool{}
	for _, n := range g.Nodes {
		inGraph[n] = true
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if p := produced[o]; p != nil {
				return fmt.Errorf("value %q produced by both %q and %q", o.Name, p.Label(), n.Label())
			}
			if o.producer != n {
				return fmt.Errorf("value %q: producer link does not point at %q", o.Name, n.Label())
			}
			if g.values[o.Name] != o && !o.alias {
				return fmt.Errorf("value %q is not registered under its name", o.Name)
			}
			produced[o] = n
		}
	}
	defined := func(v *Value) bool {
		switch v.Kind {
		case KindInput, KindInit:
			return g.values[v.Name] == v
		}
		return produced[v] != nil
	}
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if v == nil {
				continue
			}
			if !defined(v) {
				return fmt.Errorf("node %q reads %q, which nothing defines", n.Label(), v.Name)
			}
			if !hasUse(v, n, i) {
				return fmt.Errorf("value %q: use by %q input %d missing from its use list", v.Name, n.Label(), i)
			}
		}
		for _, v := range n.outer {
			if !defined(v) {
				return fmt.Errorf("subgraph of node %q reads %q, which nothing defines", n.Label(), v.Name)
			}
		}
		if err := checkDTypes(n); err != nil {
			return err
		}
	}
	for _, v := range g.values {
		for _, u := range v.uses {
			if !inGraph[u.Node] {
				return fmt.Errorf("value %q lists a use by removed node %q", v.Name, u.Node.Label())
			}
		}
	}
	for _, o := range g.Outputs {
		if !defined(o) {
			return fmt.Errorf("graph output %q is not computed", o.Name)
		}
	}
	for _, v := range g.Inits {
		if v.Const == nil || v.Const.DType != v.Type.DType {
			return fmt.Errorf("initializer %q: type does not match its data", v.Name)
		}
	}
	if _, err := g.TopoOrder(); err != nil {
		return err
	}
	return nil
}

func hasUse(v *Value, n *Node, i int) bool {
	for _, u := range v.uses {
		if u.Node == n && u.Index == i {
			return true
		}
	}
	return false
}

// sameTypeOps lists, per op, the input slots that must share one dtype.
var sameTypeOps = map[string][]int{
	"MatMul": {0, 1}, "Add": {0, 1}, "Sub": {0, 1}, "Mul": {0, 1}, "Div": {0, 1},
	"Where": {1, 2}, "Concat": nil, "Gemm": {0, 1},
}

func checkDTypes(n *Node) error {
	if CanonicalDomain(n.Domain) != "" {
		return nil
	}
	slots, ok := sameTypeOps[n.OpType]
	if !ok {
		return nil
	}
	if slots == nil {
		for i := range n.Inputs {
			slots = append(slots, i)
		}
	}
	var first DType
	for _, i := range slots {
		v := n.Input(i)
		if v == nil || v.Type.DType == Undefined {
			continue
		}
		if first == Undefined {
			first = v.Type.DType
		} else if v.Type.DType != first {
			return fmt.Errorf("node %q: input %q is %s, another input is %s", n.Label(), v.Name, v.Type.DType, first)
		}
	}
	return nil
}

// VerifyForSave is the structural check every model passes before it is
// written: Verify, the load-time shape and operand checks (CheckShapes:
// MatMul dims and broadcasting, Softmax axes, sizes), every name a
// subgraph reads from the graph is defined there under that name, and no
// name defined since loading is defined again inside a subgraph (ONNX names
// are single-assignment across graphs).
func (m *Model) VerifyForSave() error {
	g := m.Graph
	if err := g.Verify(); err != nil {
		return err
	}
	if err := g.CheckShapes(); err != nil {
		return err
	}
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			ap := a.toProto()
			for _, sub := range append([]*onnxpb.GraphProto{ap.G}, ap.Graphs...) {
				if sub == nil {
					continue
				}
				for _, name := range freeNames(sub) {
					v := g.values[name]
					if v == nil || (v.Kind == KindNode && v.producer == nil) {
						return fmt.Errorf("subgraph %q of node %q reads %q, which the graph no longer defines", a.Name, n.Label(), name)
					}
				}
			}
		}
	}
	for _, name := range g.shadowed() {
		if !g.shadowedAtLoad[name] {
			return fmt.Errorf("value %q is defined both in the graph and inside a subgraph", name)
		}
	}
	return nil
}
