package graph

import (
	"bytes"
	"slices"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// AttrKind is an attribute's type (AttributeProto.AttributeType).
type AttrKind int32

const (
	AttrFloat   AttrKind = 1
	AttrInt     AttrKind = 2
	AttrString  AttrKind = 3
	AttrTensor  AttrKind = 4
	AttrGraph   AttrKind = 5
	AttrFloats  AttrKind = 6
	AttrInts    AttrKind = 7
	AttrStrings AttrKind = 8
)

// Attr is a node attribute. Attributes the IR does not interpret (graphs,
// sparse tensors, type protos, references) keep their protobuf and are
// written back byte for byte; attributes are never mutated in place.
type Attr struct {
	Name    string
	Kind    AttrKind
	F       float32
	I       int64
	S       string
	Floats  []float32
	Ints    []int64
	Strings []string
	T       *Tensor

	pb *onnxpb.AttributeProto
}

// FloatAttr, IntAttr, IntsAttr, StringAttr make new attributes.
func FloatAttr(name string, f float32) *Attr  { return &Attr{Name: name, Kind: AttrFloat, F: f} }
func IntAttr(name string, i int64) *Attr      { return &Attr{Name: name, Kind: AttrInt, I: i} }
func IntsAttr(name string, v []int64) *Attr   { return &Attr{Name: name, Kind: AttrInts, Ints: v} }
func StringAttr(name string, s string) *Attr  { return &Attr{Name: name, Kind: AttrString, S: s} }
func TensorAttr(name string, t *Tensor) *Attr { return &Attr{Name: name, Kind: AttrTensor, T: t} }

// Attr returns the named attribute or nil.
func (n *Node) Attr(name string) *Attr {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AttrInt returns an int attribute or def.
func (n *Node) AttrInt(name string, def int64) int64 {
	if a := n.Attr(name); a != nil && a.Kind == AttrInt {
		return a.I
	}
	return def
}

// AttrFloat returns a float attribute or def.
func (n *Node) AttrFloat(name string, def float32) float32 {
	if a := n.Attr(name); a != nil && a.Kind == AttrFloat {
		return a.F
	}
	return def
}

// AttrInts returns an ints attribute, or nil when absent.
func (n *Node) AttrInts(name string) []int64 {
	if a := n.Attr(name); a != nil && a.Kind == AttrInts {
		return a.Ints
	}
	return nil
}

// AttrString returns a string attribute or def.
func (n *Node) AttrString(name, def string) string {
	if a := n.Attr(name); a != nil && a.Kind == AttrString {
		return a.S
	}
	return def
}

// SetAttr replaces or adds an attribute.
func (n *Node) SetAttr(a *Attr) {
	for i, b := range n.Attrs {
		if b.Name == a.Name {
			n.Attrs[i] = a
			return
		}
	}
	n.Attrs = append(n.Attrs, a)
}

// Equal reports whether two attributes have the same name, type and value.
func (a *Attr) Equal(b *Attr) bool {
	if a.Name != b.Name || a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case AttrFloat:
		return a.F == b.F || (a.F != a.F && b.F != b.F)
	case AttrInt:
		return a.I == b.I
	case AttrString:
		return a.S == b.S
	case AttrFloats:
		return slices.Equal(a.Floats, b.Floats)
	case AttrInts:
		return slices.Equal(a.Ints, b.Ints)
	case AttrStrings:
		return slices.Equal(a.Strings, b.Strings)
	case AttrTensor:
		if a.T == nil || b.T == nil {
			return a.T == b.T
		}
		return a.T.Equal(b.T)
	}
	return proto.Equal(a.toProto(), b.toProto())
}

// Equal reports whether two tensors have the same type, dims and bytes.
func (t *Tensor) Equal(u *Tensor) bool {
	if t.DType != u.DType || !slices.Equal(t.Dims, u.Dims) {
		return false
	}
	x, err1 := t.Raw()
	y, err2 := u.Raw()
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// GraphProto is a graph attribute's subgraph as loaded (read-only: the IR
// keeps subgraphs byte for byte), or nil for other attributes.
func (a *Attr) GraphProto() *onnxpb.GraphProto {
	if a.Kind != AttrGraph || a.pb == nil {
		return nil
	}
	return a.pb.GetG()
}

// GraphProtos is every subgraph of a graph attribute (its g, or its graphs
// list) as loaded, read-only; nil for other attributes.
func (a *Attr) GraphProtos() []*onnxpb.GraphProto {
	if a.pb == nil {
		return nil
	}
	if a.pb.G != nil {
		return []*onnxpb.GraphProto{a.pb.G}
	}
	return a.pb.Graphs
}
