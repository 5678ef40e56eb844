package graph

import (
	"fmt"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Subgraph is one graph attribute of a node (If branches, Loop/Scan bodies,
// BeamSearch decoders) wrapped as a model of its own, so that passes written
// for a Model run on it unchanged. The names it reads from enclosing scopes
// become graph inputs, typed from the enclosing graph where known (its
// constants become initializers); Inline drops them again.
type Subgraph struct {
	Model *Model
	Node  *Node  // the node holding the attribute, in the enclosing graph
	Attr  string // the attribute's name
	Index int    // position in the attribute's graphs list; -1 for its g

	outer  *Graph
	added  map[string]bool          // the outer-scope names made inputs
	formal []*onnxpb.ValueInfoProto // the subgraph's own inputs as loaded
}

// HasSubgraphs reports whether n has a graph attribute.
func (n *Node) HasSubgraphs() bool {
	for _, a := range n.Attrs {
		// Graph attributes always keep their protobuf (loaded or Inline's).
		if a.pb != nil && (a.pb.G != nil || len(a.pb.Graphs) > 0) {
			return true
		}
	}
	return false
}

// Subgraphs wraps every graph attribute of n (a node of g), in attribute
// order. Names in reserved, and every name g already uses, are never
// generated inside the wrapped graphs: ONNX names are single-assignment
// across a model's scopes, and node names are kept unique too.
func (g *Graph) Subgraphs(n *Node, reserved map[string]bool) ([]*Subgraph, error) {
	var out []*Subgraph
	for _, a := range n.Attrs {
		for i, gp := range a.GraphProtos() {
			idx := i
			if a.pb.G != nil {
				idx = -1
			}
			s, err := g.wrap(n, a.Name, idx, gp, reserved)
			if err != nil {
				return nil, fmt.Errorf("node %q attribute %q: %w", n.Label(), a.Name, err)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func (g *Graph) wrap(n *Node, attr string, idx int, gp *onnxpb.GraphProto, reserved map[string]bool) (*Subgraph, error) {
	carried := loopCarried(n, attr, gp)
	s, err := g.wrapTyped(n, attr, idx, gp, reserved, carried)
	if err != nil || len(carried) == 0 {
		return s, err
	}
	// The shapes assumed for the loop-carried values hold in every
	// iteration only if the body gives them back unchanged.
	for k, t := range carried {
		if out := s.Model.Graph.Outputs[1+k]; t.Ranked && out.Type.String() != t.String() {
			return g.wrapTyped(n, attr, idx, gp, reserved, nil)
		}
	}
	return s, nil
}

// loopCarried gives the types a Loop body's loop-carried inputs would have
// in its first iteration (the Loop's initial values), where the body does
// not declare a shape for them; nil for other subgraphs.
func loopCarried(n *Node, attr string, gp *onnxpb.GraphProto) map[int]Type {
	if !n.Is("Loop") || attr != "body" || len(gp.Input) < 2 || len(gp.Output) < len(gp.Input)-1 {
		return nil
	}
	out := map[int]Type{}
	for k, vi := range gp.Input[2:] {
		init := n.Input(2 + k)
		declared := typeFromProto(vi.GetType())
		if init == nil || declared.Ranked || !init.Type.Ranked {
			continue
		}
		if _, static := init.Type.Shape.Ints(); !static {
			continue
		}
		if declared.DType != Undefined && declared.DType != init.Type.DType {
			continue
		}
		out[k] = init.Type
	}
	return out
}

func (g *Graph) wrapTyped(n *Node, attr string, idx int, gp *onnxpb.GraphProto, reserved map[string]bool, carried map[int]Type) (*Subgraph, error) {
	m := g.model
	body := shallowClone(gp)
	body.Input = append([]*onnxpb.ValueInfoProto(nil), gp.Input...)
	for k, t := range carried {
		vi := shallowClone(body.Input[2+k])
		vi.Type = typeToProto(t)
		body.Input[2+k] = vi
	}
	body.Initializer = append([]*onnxpb.TensorProto(nil), gp.Initializer...)
	added := map[string]bool{}
	for _, name := range freeNames(gp) {
		added[name] = true
		v := g.values[name]
		if v != nil && v.Const != nil {
			// A constant of the enclosing graph stays a constant: the
			// matcher reads scales from it, and validation must not feed
			// it random values.
			body.Initializer = append(body.Initializer, v.Const.toProto(name))
			continue
		}
		vi := &onnxpb.ValueInfoProto{Name: proto.String(name)}
		if v != nil && (v.Type.DType != Undefined || v.Type.Ranked) {
			vi.Type = typeToProto(v.Type)
		}
		body.Input = append(body.Input, vi)
	}
	pb := &onnxpb.ModelProto{IrVersion: proto.Int64(m.IRVersion), Graph: body}
	for _, o := range m.Opsets {
		pb.OpsetImport = append(pb.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(o.Domain), Version: proto.Int64(o.Version)})
	}
	dir := ""
	if m.src != nil {
		dir = m.src.dir
	}
	sub, err := FromProto(pb, dir)
	if err != nil {
		return nil, err
	}
	// Shape values computed outside (Shape → Gather → Concat) stay known.
	for name := range added {
		if v, w := g.values[name], sub.Graph.values[name]; v != nil && w != nil && v.Sym != nil && w.Sym == nil {
			w.Sym = v.Sym
		}
	}
	// Shared, not copied: wrapping stays cheap in a model with many
	// subgraphs and many names.
	sub.Graph.reserved, sub.Graph.enclosing = reserved, g
	if len(g.pinned) > 0 {
		sub.Graph.pinned = g.pinned
		if len(pinInputs(sub.Graph, g.pinned)) > 0 {
			reinfer(sub.Graph, g.pinned)
		}
	}
	return &Subgraph{Model: sub, Node: n, Attr: attr, Index: idx, outer: g, added: added, formal: gp.Input}, nil
}

// Names adds every value and node name the model uses, in every scope, to
// into.
func (m *Model) Names(into map[string]bool) {
	var walk func(gp *onnxpb.GraphProto)
	walk = func(gp *onnxpb.GraphProto) {
		definedNames(gp, into)
		for _, n := range gp.Node {
			into[n.GetName()] = true
			for _, a := range n.Attribute {
				for _, sub := range append([]*onnxpb.GraphProto{a.G}, a.Graphs...) {
					if sub != nil {
						walk(sub)
					}
				}
			}
		}
	}
	walk(m.ToProto().Graph)
	for name := range m.Graph.values {
		into[name] = true
	}
	delete(into, "")
}

// Inline writes the wrapped model's graph back as the attribute it came
// from, without the inputs wrap added, and updates what the enclosing graph
// knows of it: the outer values it reads and the names defined inside.
func (s *Subgraph) Inline() error {
	gp := s.Model.ToProto().Graph
	var ins []*onnxpb.ValueInfoProto
	for i, vi := range gp.Input {
		if s.added[vi.GetName()] {
			continue
		}
		if i < len(s.formal) {
			// As the file declared it: a shape assumed for the first
			// iteration is not written into the body.
			vi = s.formal[i]
		}
		ins = append(ins, vi)
	}
	gp.Input = ins
	var inits []*onnxpb.TensorProto
	for _, t := range gp.Initializer {
		if !s.added[t.GetName()] {
			inits = append(inits, t)
		}
	}
	gp.Initializer = inits
	a := s.Node.Attr(s.Attr)
	if a == nil {
		return fmt.Errorf("node %q lost its attribute %q", s.Node.Label(), s.Attr)
	}
	ap := shallowClone(a.toProto())
	if s.Index < 0 {
		ap.G = gp
	} else {
		ap.Graphs = append([]*onnxpb.GraphProto(nil), ap.Graphs...)
		ap.Graphs[s.Index] = gp
	}
	s.Node.SetAttr(&Attr{Name: a.Name, Kind: AttrGraph, pb: ap})
	return s.outer.relinkOuter(s.Node)
}

// relinkOuter recomputes the outer-scope values n's subgraphs read, after
// one of them changed.
func (g *Graph) relinkOuter(n *Node) error {
	var now []*Value
	for _, a := range n.Attrs {
		ap := a.toProto()
		for _, sub := range append([]*onnxpb.GraphProto{ap.G}, ap.Graphs...) {
			if sub == nil {
				continue
			}
			definedNames(sub, g.subNames)
			for _, name := range freeNames(sub) {
				v := g.values[name]
				if v == nil {
					return fmt.Errorf("subgraph %q of node %q reads %q, which the graph does not define", a.Name, n.Label(), name)
				}
				now = appendUnique(now, v)
			}
		}
	}
	for _, v := range n.outer {
		v.removeUse(n, -1)
	}
	n.outer = now
	for _, v := range now {
		v.uses = append(v.uses, Use{Node: n, Index: -1})
	}
	return nil
}

// FreeNames lists the names a subgraph reads from enclosing scopes, its own
// subgraphs' reads included.
func FreeNames(gp *onnxpb.GraphProto) []string { return freeNames(gp) }
