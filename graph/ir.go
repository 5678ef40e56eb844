package graph

import (
	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Model is a loaded ONNX model. Everything the IR does not model (metadata,
// functions, training info, unknown fields) stays in the protobuf it came
// from and is written back as it was.
type Model struct {
	Graph     *Graph
	Opsets    []Opset
	IRVersion int64

	pb  *onnxpb.ModelProto
	src *source
}

// Opset is one opset_import entry.
type Opset struct {
	Domain  string
	Version int64
}

// Opset returns the version imported for domain ("" and "ai.onnx" are the
// default domain), or 0 when not imported.
func (m *Model) Opset(domain string) int64 {
	for _, o := range m.Opsets {
		if CanonicalDomain(o.Domain) == CanonicalDomain(domain) {
			return o.Version
		}
	}
	return 0
}

// SetOpset imports domain at version, replacing an existing import.
func (m *Model) SetOpset(domain string, version int64) {
	for i, o := range m.Opsets {
		if CanonicalDomain(o.Domain) == CanonicalDomain(domain) {
			m.Opsets[i].Version = version
			return
		}
	}
	m.Opsets = append(m.Opsets, Opset{Domain: domain, Version: version})
}

// Graph is a computation graph: nodes in order, values by name.
type Graph struct {
	Name    string
	Nodes   []*Node
	Inputs  []*Value // graph inputs (not initializers)
	Outputs []*Value
	Inits   []*Value // initializers, in file order

	model  *Model
	values map[string]*Value
	pb     *onnxpb.GraphProto
	// value_info entries as loaded, in order, keyed by value name
	valueInfo []*onnxpb.ValueInfoProto
	// initializers that are also listed as graph inputs (IR < 4 style)
	initInputs map[string]bool
	inputOrder []string        // names of all graph inputs as loaded, initializers included
	staleInfo  map[string]bool // value_info names that match no value (kept as found)
	aliasAt    []int           // positions of nodes that redefine a name (see nodeFromProto)
	subNames   map[string]bool // names defined inside subgraphs (see UniqueName)
	// names used in other scopes of the model this graph was wrapped from,
	// and the graph holding it (graph/subgraph.go); UniqueName returns none
	// of theirs
	reserved  map[string]bool
	enclosing *Graph
	pinned    map[string]int64 // --dim pins, applied to subgraphs when wrapped
	// names both the graph and a subgraph defined in the file as loaded
	shadowedAtLoad map[string]bool
}

// Model returns the model that owns the graph.
func (g *Graph) Model() *Model { return g.model }

// Value returns the value with the given name, or nil.
func (g *Graph) Value(name string) *Value { return g.values[name] }

// Values returns every value of the graph, keyed by name.
func (g *Graph) Values() map[string]*Value { return g.values }

// Kind says where a value comes from.
type Kind int

const (
	KindNode Kind = iota // produced by a node
	KindInput
	KindInit
)

// Value is one named tensor.
type Value struct {
	Name string
	Type Type
	Kind Kind

	// Const holds the value of initializers, Constant outputs and tensors
	// that shape folding computed; nil otherwise.
	Const *Tensor
	// Sym holds the content of small integer tensors computed from shapes,
	// with symbolic entries where dims are symbolic (Shape → Gather → Concat).
	Sym []Dim

	producer *Node
	outIndex int
	uses     []Use
	info     *onnxpb.ValueInfoProto // as loaded (input/output/value_info)
	alias    bool                   // a duplicate definition kept only for round trips
}

// Use is one consumer of a value. Index is the input slot, or -1 when the
// value is read inside a subgraph attribute of Node.
type Use struct {
	Node  *Node
	Index int
}

// Producer returns the node that computes v, or nil.
func (v *Value) Producer() *Node { return v.producer }

// Uses returns the consumers of v.
func (v *Value) Uses() []Use { return v.uses }

// Node is one operator application.
type Node struct {
	Name    string
	OpType  string
	Domain  string
	Inputs  []*Value // nil entries for omitted optional inputs
	Outputs []*Value // nil entries for omitted optional outputs
	Attrs   []*Attr

	outer []*Value // outer-scope values read by subgraph attributes
	pb    *onnxpb.NodeProto
}

// Input returns input i or nil when absent.
func (n *Node) Input(i int) *Value {
	if i < len(n.Inputs) {
		return n.Inputs[i]
	}
	return nil
}

// Output returns output i or nil when absent.
func (n *Node) Output(i int) *Value {
	if i < len(n.Outputs) {
		return n.Outputs[i]
	}
	return nil
}

// Is reports whether the node is op in the default ONNX domain.
func (n *Node) Is(op string) bool {
	return n.OpType == op && CanonicalDomain(n.Domain) == ""
}

// IsFloatCast reports whether n (nil: no) is a Cast to a floating type.
func (n *Node) IsFloatCast() bool {
	return n != nil && n.Is("Cast") && DType(n.AttrInt("to", 0)).IsFloat()
}

// Label names the node for messages: its name, or its op and first output.
func (n *Node) Label() string {
	if n.Name != "" {
		return n.Name
	}
	if len(n.Outputs) > 0 && n.Outputs[0] != nil {
		return n.OpType + "→" + n.Outputs[0].Name
	}
	return n.OpType
}
