package graph

import (
	"fmt"

	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Load-time checks: what ONNX Runtime and onnx.checker refuse, attnopt
// refuses too, with one line naming the node or value, before any pass can
// index an input that is not there or allocate from a size that overflows.

var attrKindNames = map[AttrKind]string{
	AttrFloat: "FLOAT", AttrInt: "INT", AttrString: "STRING", AttrTensor: "TENSOR", AttrGraph: "GRAPH",
	AttrFloats: "FLOATS", AttrInts: "INTS", AttrStrings: "STRINGS", 9: "TENSORS", 10: "GRAPHS",
	attrSparseTensor: "SPARSE_TENSOR", 12: "SPARSE_TENSORS", attrTypeProto: "TYPE_PROTO", 14: "TYPE_PROTOS",
}

func (k AttrKind) String() string {
	if s, ok := attrKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("type %d", int32(k))
}

// runtimeDomains are the domains ONNX Runtime imports by itself when a
// model uses them without an opset_import entry (its own test models do);
// any other domain must be imported.
var runtimeDomains = map[string]bool{
	"com.microsoft": true, "com.microsoft.nchwc": true, "com.microsoft.experimental": true,
	"ai.onnx.ml": true, "ai.onnx.training": true, "ai.onnx.preview.training": true,
	"com.ms.internal.nhwc": true, "org.pytorch.aten": true,
}

// protoChecker carries what the static checks of one model need.
type protoChecker struct {
	opsets map[string]int64 // imported version per normalised domain
	ir     int64
}

// checkModelProto runs the static checks over the whole protobuf,
// subgraphs included.
func checkModelProto(pb *onnxpb.ModelProto) error {
	if len(pb.OpsetImport) == 0 {
		return badInput("no opset_import: the model does not say which operator set its nodes follow")
	}
	c := &protoChecker{opsets: map[string]int64{}, ir: pb.GetIrVersion()}
	for _, o := range pb.OpsetImport {
		if o.GetVersion() < 1 {
			return badInput("opset_import of domain %q has version %d", o.GetDomain(), o.GetVersion())
		}
		c.opsets[CanonicalDomain(o.GetDomain())] = o.GetVersion()
	}
	return c.graph(pb.Graph)
}

func (c *protoChecker) graph(g *onnxpb.GraphProto) error {
	for _, list := range [][]*onnxpb.ValueInfoProto{g.Input, g.Output, g.ValueInfo} {
		for _, vi := range list {
			if err := checkValueInfo(vi); err != nil {
				return err
			}
		}
	}
	for _, n := range g.Node {
		if err := c.node(n); err != nil {
			return err
		}
	}
	return nil
}

// checkValueInfo refuses unknown element types and static shapes whose
// byte size does not fit in an int64.
func checkValueInfo(vi *onnxpb.ValueInfoProto) error {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return nil
	}
	dt := DType(tt.GetElemType())
	if _, ok := dtypeNames[dt]; !ok {
		return badInput("value %q has unknown data type %d", vi.GetName(), tt.GetElemType())
	}
	if bytesOverflow(dt, staticNumel(typeFromProto(vi.GetType()).Shape)) {
		return badInput("value %q: shape %v needs more than %s", vi.GetName(), typeFromProto(vi.GetType()).Shape, maxBytesText)
	}
	return nil
}

// maxBytesText is the size limit bytesOverflow enforces: DType.StorageBytes
// refuses more than 2^62 bits, 2^59 bytes.
const maxBytesText = "2^59 bytes"

// bytesOverflow: n elements of dt (n < 0: the count itself overflowed) take
// more than 2^59 bytes (DType.StorageBytes), past what any size arithmetic
// here may hold.
func bytesOverflow(dt DType, n int64) bool {
	if n < 0 {
		return true
	}
	if dt.Bits() == 0 {
		dt = Uint8 // strings and undefined: at least a byte each
	}
	return dt.StorageBytes(n) < 0
}

func protoLabel(n *onnxpb.NodeProto) string {
	if n.GetName() != "" {
		return n.GetName()
	}
	if len(n.Output) > 0 && n.Output[0] != "" {
		return n.GetOpType() + "→" + n.Output[0]
	}
	return n.GetOpType()
}

func (c *protoChecker) node(n *onnxpb.NodeProto) error {
	label := protoLabel(n)
	if n.GetOpType() == "" {
		return badInput("node %q has an empty op_type", label)
	}
	dom := CanonicalDomain(n.GetDomain())
	ver, ok := c.opsets[dom]
	if !ok && !runtimeDomains[dom] {
		return badInput("node %q (%s) is in domain %q, which the model's opset_import does not import", label, n.GetOpType(), n.GetDomain())
	}
	seen := map[string]bool{}
	for _, a := range n.Attribute {
		if a.GetName() == "" {
			return badInput("node %q has an attribute without a name", label)
		}
		if seen[a.GetName()] {
			return badInput("node %q has attribute %q twice", label, a.GetName())
		}
		seen[a.GetName()] = true
		k := AttrKind(a.GetType())
		if _, known := attrKindNames[k]; !known && (k != 0 || c.ir >= 2) {
			return badInput("node %q: attribute %q has undefined type %d", label, a.GetName(), int32(k))
		}
		for _, sub := range append([]*onnxpb.GraphProto{a.G}, a.Graphs...) {
			if sub != nil {
				if err := c.graph(sub); err != nil {
					return err
				}
			}
		}
	}
	if dom != "" {
		return nil
	}
	if s := schemas[n.GetOpType()]; s != nil {
		if err := s.check(n, label, ver); err != nil {
			return err
		}
	}
	return checkOpAttrs(n, label)
}

// check applies one schema entry: counts, required slots, attribute types.
func (s *opSchema) check(n *onnxpb.NodeProto, label string, opset int64) error {
	op := n.GetOpType()
	minIn := s.minIn
	if s.oldBefore > 0 && opset < s.oldBefore {
		minIn = s.oldMinIn
	}
	if len(n.Input) < minIn {
		return badInput("node %q (%s) has %d input(s); %s needs at least %d", label, op, len(n.Input), op, minIn)
	}
	if s.maxIn >= 0 && len(n.Input) > s.maxIn {
		return badInput("node %q (%s) has %d inputs; %s takes at most %d", label, op, len(n.Input), op, s.maxIn)
	}
	for i := 0; i < minIn; i++ {
		if n.Input[i] == "" {
			return badInput("node %q (%s): required input %d is empty", label, op, i)
		}
	}
	if len(n.Output) < s.minOut || (s.maxOut >= 0 && len(n.Output) > s.maxOut) {
		return badInput("node %q (%s) has %d output(s); %s has %s", label, op, len(n.Output), op, countRange(s.minOut, s.maxOut))
	}
	for i := 0; i < s.minOut; i++ {
		if n.Output[i] == "" {
			return badInput("node %q (%s): output %d has no name", label, op, i)
		}
	}
	for _, a := range n.Attribute {
		want, ok := s.attrs[a.GetName()]
		if ok && AttrKind(a.GetType()) != want {
			return badInput("node %q (%s): attribute %q is %s; %s wants %s", label, op, a.GetName(), AttrKind(a.GetType()), op, want)
		}
	}
	for _, name := range requiredAttrs[op] {
		if !hasAttr(n, name) {
			return badInput("node %q (%s) lacks the required attribute %q", label, op, name)
		}
	}
	return nil
}

func countRange(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

func hasAttr(n *onnxpb.NodeProto, name string) bool {
	for _, a := range n.Attribute {
		if a.GetName() == name {
			return true
		}
	}
	return false
}

func attrOf(n *onnxpb.NodeProto, name string) *onnxpb.AttributeProto {
	for _, a := range n.Attribute {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

// checkOpAttrs checks attribute values whose misuse passes would index or
// allocate with.
func checkOpAttrs(n *onnxpb.NodeProto, label string) error {
	switch n.GetOpType() {
	case "Transpose":
		if a := attrOf(n, "perm"); a != nil {
			seen := map[int64]bool{}
			for _, p := range a.Ints {
				if p < 0 || p >= int64(len(a.Ints)) || seen[p] {
					return badInput("node %q (Transpose): perm %v is not a permutation of 0..%d", label, a.Ints, len(a.Ints)-1)
				}
				seen[p] = true
			}
		}
	case "Cast":
		if a := attrOf(n, "to"); a != nil {
			if _, ok := dtypeNames[DType(a.GetI())]; !ok || a.GetI() == 0 {
				return badInput("node %q (Cast): to = %d is not an ONNX data type", label, a.GetI())
			}
		}
	}
	return nil
}

// CheckShapes is the load-time check of shapes and operands (checkShapes)
// for a graph built or changed since: the final verification before a
// model is written runs it (VerifyForSave, and passes' own check of every
// rewritten graph and subgraph), so attnopt never writes a model it would
// refuse to load.
func (g *Graph) CheckShapes() error { return g.checkShapes() }

// checkShapes runs after inference: shapes that cannot exist or ops whose
// operands cannot combine.
func (g *Graph) checkShapes() error {
	opset := g.model.Opset("")
	for _, n := range g.Nodes {
		if CanonicalDomain(n.Domain) != "" {
			continue
		}
		// The same rule the final check before saving applies.
		if err := checkDTypes(n); err != nil {
			return badInput("%v", err)
		}
		switch n.OpType {
		case "MatMul":
			if err := checkMatMul(n); err != nil {
				return err
			}
		case "Softmax", "LogSoftmax", "Hardmax":
			in := n.Input(0)
			if in == nil || !in.Type.Ranked {
				continue
			}
			def := int64(-1)
			if opset < 13 {
				def = 1
			}
			r := int64(len(in.Type.Shape))
			if ax := n.AttrInt("axis", def); ax < -r || ax >= r || r == 0 {
				return badInput("node %q (%s): axis %d is out of range for rank %d", n.Label(), n.OpType, ax, r)
			}
		case "Transpose":
			in, p := n.Input(0), n.AttrInts("perm")
			if in != nil && in.Type.Ranked && p != nil && len(p) != len(in.Type.Shape) {
				return badInput("node %q (Transpose): perm %v has %d entries, the input has rank %d", n.Label(), p, len(p), len(in.Type.Shape))
			}
		}
	}
	for _, v := range g.values {
		if !v.Type.Ranked {
			continue
		}
		if bytesOverflow(v.Type.DType, staticNumel(v.Type.Shape)) {
			return badInput("value %q: shape %v needs more than %s", v.Name, v.Type.Shape, maxBytesText)
		}
	}
	return nil
}

// checkMatMul refuses static inner dims that differ and batch dims that do
// not broadcast.
func checkMatMul(n *Node) error {
	a, b := n.Input(0), n.Input(1)
	if a == nil || b == nil || !a.Type.Ranked || !b.Type.Ranked || len(a.Type.Shape) == 0 || len(b.Type.Shape) == 0 {
		return nil
	}
	sa, sb := a.Type.Shape, b.Type.Shape
	ka := sa[len(sa)-1]
	kb := sb[0]
	if len(sb) >= 2 {
		kb = sb[len(sb)-2]
	}
	bad := ka.Static() && kb.Static() && ka.C != kb.C
	if len(sa) > 2 && len(sb) > 2 {
		ba, bb := sa[:len(sa)-2], sb[:len(sb)-2]
		for i := 1; i <= min(len(ba), len(bb)); i++ {
			x, y := ba[len(ba)-i], bb[len(bb)-i]
			if x.Static() && y.Static() && x.C != y.C && x.C != 1 && y.C != 1 {
				bad = true
			}
		}
	}
	if bad {
		return badInput("node %q (MatMul): cannot multiply %q %v by %q %v", n.Label(), a.Name, sa, b.Name, sb)
	}
	return nil
}

// staticNumel multiplies the static dims (symbolic ones count as 1, a
// lower bound); -1 when that product already overflows.
func staticNumel(s Shape) int64 {
	n := int64(1)
	for _, d := range s {
		if d.Unknown || d.C < 0 {
			continue
		}
		var ok bool
		if n, ok = mulCheck(n, d.C); !ok {
			return -1
		}
	}
	return n
}
