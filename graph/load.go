package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Load reads a model file. External data is opened relative to its folder
// and read only when a tensor's data is asked for.
func Load(path string) (*Model, error) {
	data, err := readModelFile(path)
	if err != nil {
		return nil, &InputError{File: path, Msg: "cannot read: " + unwrapPathErr(err), Err: err}
	}
	m, err := LoadBytes(data, filepath.Dir(path))
	if err != nil {
		return nil, withFile(err, path)
	}
	return m, nil
}

func unwrapPathErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// errNoGraph: the bytes parse as protobuf but hold no model.
var errNoGraph = errors.New("no graph or ir_version")

// LoadBytes parses a serialized model; dir is the folder external data is
// relative to ("" when there is none).
func LoadBytes(data []byte, dir string) (*Model, error) {
	pb, err := decodeModel(data)
	if err == nil && (pb.Graph == nil || pb.IrVersion == nil) {
		err = errNoGraph
	}
	if err != nil {
		if what := foreignFormat(data); what != "" {
			return nil, badInput("%s", what)
		}
		if err == errNoGraph {
			return nil, badInput("not an ONNX model: no graph or ir_version")
		}
		return nil, badInput("not a valid ONNX model (%v)", err)
	}
	return FromProto(pb, dir)
}

// FromProto builds the IR over a parsed model; pb is kept and must not be
// changed by the caller afterwards.
func FromProto(pb *onnxpb.ModelProto, dir string) (*Model, error) {
	if err := checkModelProto(pb); err != nil {
		return nil, err
	}
	m := &Model{pb: pb, src: newSource(dir), IRVersion: pb.GetIrVersion()}
	for _, o := range pb.OpsetImport {
		m.Opsets = append(m.Opsets, Opset{Domain: o.GetDomain(), Version: o.GetVersion()})
	}
	g, err := buildGraph(m, pb.Graph)
	if err != nil {
		return nil, err
	}
	m.Graph = g
	if err := g.checkAcyclic(); err != nil {
		return nil, err
	}
	InferShapes(g)
	if err := g.checkShapes(); err != nil {
		return nil, err
	}
	return m, nil
}

func buildGraph(m *Model, gp *onnxpb.GraphProto) (*Graph, error) {
	g := &Graph{
		Name:       gp.GetName(),
		model:      m,
		values:     map[string]*Value{},
		pb:         gp,
		valueInfo:  gp.ValueInfo,
		initInputs: map[string]bool{},
	}
	for _, tp := range gp.Initializer {
		t, err := tensorFromProto(tp, m.src)
		if err != nil {
			return nil, err
		}
		if tp.GetName() == "" {
			return nil, badInput("initializer without a name")
		}
		if g.values[tp.GetName()] != nil {
			return nil, badInput("initializer %q defined twice", tp.GetName())
		}
		v := &Value{Name: tp.GetName(), Kind: KindInit, Const: t, Type: TensorOf(t.DType, StaticShape(t.Dims...))}
		g.values[v.Name] = v
		g.Inits = append(g.Inits, v)
	}
	for _, vi := range gp.Input {
		name := vi.GetName()
		g.inputOrder = append(g.inputOrder, name)
		if v := g.values[name]; v != nil && v.Kind == KindInit {
			g.initInputs[name] = true
			v.info = vi
			continue
		}
		if g.values[name] != nil {
			return nil, badInput("graph input %q listed twice", name)
		}
		v := &Value{Name: name, Kind: KindInput, Type: typeFromProto(vi.GetType()), info: vi}
		g.values[name] = v
		g.Inputs = append(g.Inputs, v)
	}
	for _, np := range gp.Node {
		n, err := g.nodeFromProto(np)
		if err != nil {
			return nil, err
		}
		g.Nodes = append(g.Nodes, n)
	}
	for _, at := range g.aliasAt {
		for _, o := range g.Nodes[at].Outputs {
			for _, later := range g.Nodes[at+1:] {
				for _, in := range later.Inputs {
					if o != nil && in != nil && in.Name == o.Name {
						return nil, badInput("value %q is defined twice and read after its second definition (node %q)", o.Name, later.Label())
					}
				}
			}
		}
	}
	g.subNames = map[string]bool{}
	for _, np := range gp.Node {
		for _, a := range np.Attribute {
			for _, sub := range append([]*onnxpb.GraphProto{a.G}, a.Graphs...) {
				if sub != nil {
					definedNames(sub, g.subNames)
				}
			}
		}
	}
	// ONNX Runtime accepts a subgraph redefining an outer name (its own
	// BeamSearch test models do); a rewrite must only not add one.
	g.shadowedAtLoad = map[string]bool{}
	for _, name := range g.shadowed() {
		g.shadowedAtLoad[name] = true
	}
	for _, vi := range gp.Output {
		v := g.values[vi.GetName()]
		if v == nil {
			return nil, badInput("graph output %q is never computed", vi.GetName())
		}
		if v.info == nil {
			v.info = vi
		}
		if t := typeFromProto(vi.GetType()); t.DType != Undefined || t.Ranked {
			v.Type = mergeType(v.Type, t)
		}
		g.Outputs = append(g.Outputs, v)
	}
	g.staleInfo = map[string]bool{}
	for _, vi := range gp.ValueInfo {
		if g.values[vi.GetName()] == nil {
			g.staleInfo[vi.GetName()] = true
		}
		if v := g.values[vi.GetName()]; v != nil && v.Kind == KindNode {
			v.Type = mergeType(v.Type, typeFromProto(vi.GetType()))
		}
	}
	return g, nil
}

func (g *Graph) nodeFromProto(np *onnxpb.NodeProto) (*Node, error) {
	n := &Node{Name: np.GetName(), OpType: np.GetOpType(), Domain: np.GetDomain(), pb: np}
	for _, name := range np.Input {
		if name == "" {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		v := g.values[name]
		if v == nil {
			// Defined later (unsorted file) or never: resolved below.
			v = &Value{Name: name, Kind: KindNode, outIndex: -1}
			g.values[name] = v
		}
		n.Inputs = append(n.Inputs, v)
	}
	for i, name := range np.Output {
		if name == "" {
			n.Outputs = append(n.Outputs, nil)
			continue
		}
		v := g.values[name]
		switch {
		case v == nil:
			v = &Value{Name: name, Kind: KindNode}
			g.values[name] = v
		case v.Kind == KindNode && v.producer != nil && np.GetOpType() == "Constant":
			// Some exports define a name twice with a Constant that nothing
			// reads afterwards (GPT-2 in ORT's tests). The copy becomes an
			// unregistered alias so the file round-trips; buildGraph refuses
			// it if any later node reads the name, and dead-code removal
			// drops it.
			v = &Value{Name: name, Kind: KindNode, alias: true}
			g.aliasAt = append(g.aliasAt, len(g.Nodes))
		case v.Kind != KindNode || v.producer != nil:
			return nil, badInput("value %q is defined twice (second time by node %q)", name, n.Label())
		}
		v.producer, v.outIndex = n, i
		n.Outputs = append(n.Outputs, v)
	}
	for _, ap := range np.Attribute {
		a, err := attrFromProto(ap, g.model.src)
		if err != nil {
			return nil, fmt.Errorf("node %q: %w", n.Label(), err)
		}
		n.Attrs = append(n.Attrs, a)
		for _, sub := range append([]*onnxpb.GraphProto{ap.G}, ap.Graphs...) {
			if sub == nil {
				continue
			}
			for _, name := range freeNames(sub) {
				if v := g.values[name]; v != nil {
					n.outer = appendUnique(n.outer, v)
				} else {
					v = &Value{Name: name, Kind: KindNode, outIndex: -1}
					g.values[name] = v
					n.outer = appendUnique(n.outer, v)
				}
			}
		}
	}
	for i, v := range n.Inputs {
		if v != nil {
			v.uses = append(v.uses, Use{Node: n, Index: i})
		}
	}
	for _, v := range n.outer {
		v.uses = append(v.uses, Use{Node: n, Index: -1})
	}
	return n, nil
}

func appendUnique(vs []*Value, v *Value) []*Value {
	for _, w := range vs {
		if w == v {
			return vs
		}
	}
	return append(vs, v)
}

// shadowed lists the names the graph defines that a subgraph defines again.
func (g *Graph) shadowed() []string {
	var names []string
	for name, v := range g.values {
		if g.subNames[name] && (v.Kind != KindNode || v.producer != nil) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// localNames adds the names g itself defines: initializers, inputs and
// node outputs (not those of its subgraphs).
func localNames(g *onnxpb.GraphProto, into map[string]bool) {
	for _, t := range g.Initializer {
		into[t.GetName()] = true
	}
	for _, vi := range g.Input {
		into[vi.GetName()] = true
	}
	for _, n := range g.Node {
		for _, o := range n.Output {
			if o != "" {
				into[o] = true
			}
		}
	}
}

// definedNames adds every name a subgraph and its own subgraphs define.
func definedNames(g *onnxpb.GraphProto, into map[string]bool) {
	localNames(g, into)
	for _, n := range g.Node {
		for _, a := range n.Attribute {
			for _, sub := range append([]*onnxpb.GraphProto{a.G}, a.Graphs...) {
				if sub != nil {
					definedNames(sub, into)
				}
			}
		}
	}
}

// freeNames lists the names a subgraph reads from enclosing scopes.
func freeNames(g *onnxpb.GraphProto) []string {
	defined := map[string]bool{}
	localNames(g, defined)
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if name != "" && !defined[name] && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, n := range g.Node {
		for _, in := range n.Input {
			add(in)
		}
		for _, a := range n.Attribute {
			for _, sub := range append([]*onnxpb.GraphProto{a.G}, a.Graphs...) {
				if sub != nil {
					for _, name := range freeNames(sub) {
						add(name)
					}
				}
			}
		}
	}
	for _, o := range g.Output {
		add(o.GetName())
	}
	return out
}

// checkAcyclic fails on names used but never defined and on cycles.
func (g *Graph) checkAcyclic() error {
	for _, v := range g.values {
		if v.Kind == KindNode && v.producer == nil {
			user := ""
			if len(v.uses) > 0 {
				user = " (used by node " + strconv.Quote(v.uses[0].Node.Label()) + ")"
			}
			return badInput("value %q is used but never defined%s", v.Name, user)
		}
	}
	if _, err := g.TopoOrder(); err != nil {
		return badInput("%v", err)
	}
	return nil
}

func typeFromProto(tp *onnxpb.TypeProto) Type {
	tt := tp.GetTensorType()
	if tt == nil {
		return Type{}
	}
	t := Type{DType: DType(tt.GetElemType())}
	if tt.Shape == nil {
		return t
	}
	t.Ranked = true
	t.Shape = make(Shape, len(tt.Shape.Dim))
	for i, d := range tt.Shape.Dim {
		switch x := d.Value.(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			if x.DimValue >= 0 {
				t.Shape[i] = D(x.DimValue)
			} else {
				t.Shape[i] = UnknownDim
			}
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			if x.DimParam != "" {
				t.Shape[i] = parseDimParam(x.DimParam)
			} else {
				t.Shape[i] = UnknownDim
			}
		default:
			t.Shape[i] = UnknownDim
		}
	}
	return t
}

func tensorFromProto(tp *onnxpb.TensorProto, src *source) (*Tensor, error) {
	t := &Tensor{Name: tp.GetName(), DType: DType(tp.GetDataType()), Dims: tp.Dims, pb: tp}
	for _, d := range tp.Dims {
		if d < 0 {
			return nil, badInput("tensor %q has a negative dim %d", t.Name, d)
		}
	}
	n := t.Numel()
	if n < 0 {
		return nil, badInput("tensor %q: dims %v overflow", t.Name, tp.Dims)
	}
	if t.DType == String || t.DType.Bits() == 0 {
		if t.DType == String && int64(len(tp.StringData)) == n {
			return t, nil
		}
		if t.DType == String {
			return nil, badInput("tensor %q: %d strings stored, shape needs %d", t.Name, len(tp.StringData), n)
		}
		return nil, badInput("tensor %q has unsupported data type %d", t.Name, tp.GetDataType())
	}
	size := t.ByteSize()
	if size < 0 {
		return nil, badInput("tensor %q: dims %v claim more data than can exist", t.Name, tp.Dims)
	}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		ref := &externalRef{src: src, offset: 0, length: -1}
		for _, kv := range tp.ExternalData {
			switch kv.GetKey() {
			case "location":
				ref.location = kv.GetValue()
			case "offset", "length":
				x, err := strconv.ParseInt(kv.GetValue(), 10, 64)
				if err != nil || x < 0 {
					return nil, badInput("tensor %q: bad external data %s %q", t.Name, kv.GetKey(), kv.GetValue())
				}
				if kv.GetKey() == "offset" {
					ref.offset = x
				} else {
					ref.length = x
				}
			}
		}
		if err := checkLocation(ref.location); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if ref.length >= 0 && ref.length != size {
			return nil, badInput("tensor %q: external length %d, dims %v need %d bytes", t.Name, ref.length, tp.Dims, size)
		}
		f, err := src.openRange(ref.location, ref.offset, size)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		f.Close()
		t.ext = ref
		return t, nil
	}
	// Inline data: check the stored amount against the dims now, so a
	// tensor claiming 10^18 elements fails here and is never allocated.
	stored := int64(len(tp.RawData))
	if tp.RawData == nil {
		stored = typedCount(tp, t.DType)
	}
	if stored != size {
		return nil, badInput("tensor %q: dims %v need %d bytes of %s, file holds %d", t.Name, tp.Dims, size, t.DType, stored)
	}
	return t, nil
}

// typedCount is the byte size the typed fields of tp would expand to.
func typedCount(tp *onnxpb.TensorProto, dt DType) int64 {
	var n int64
	switch dt {
	case Float32, Complex64:
		n = int64(len(tp.FloatData))
		return n * 4
	case Int64:
		return int64(len(tp.Int64Data)) * 8
	case Float64:
		return int64(len(tp.DoubleData)) * 8
	case Uint32, Uint64:
		return int64(len(tp.Uint64Data)) * int64(dt.Bits()/8)
	case Int4, Uint4, Float4E2M1, Int2, Uint2:
		return int64(len(tp.Int32Data))
	}
	return int64(len(tp.Int32Data)) * int64(dt.Bits()/8)
}

func attrFromProto(ap *onnxpb.AttributeProto, src *source) (*Attr, error) {
	a := &Attr{Name: ap.GetName(), Kind: AttrKind(ap.GetType()), pb: ap}
	switch a.Kind {
	case AttrFloat:
		a.F = ap.GetF()
	case AttrInt:
		a.I = ap.GetI()
	case AttrString:
		a.S = string(ap.GetS())
	case AttrFloats:
		a.Floats = ap.Floats
	case AttrInts:
		a.Ints = ap.Ints
	case AttrStrings:
		for _, s := range ap.Strings {
			a.Strings = append(a.Strings, string(s))
		}
	case AttrTensor:
		if ap.T != nil {
			t, err := tensorFromProto(ap.T, src)
			if err != nil {
				return nil, err
			}
			a.T = t
		}
	}
	return a, nil
}

func mergeType(a, b Type) Type {
	if a.DType == Undefined {
		a.DType = b.DType
	}
	if !a.Ranked && b.Ranked {
		a.Shape, a.Ranked = append(Shape(nil), b.Shape...), true
	} else if a.Ranked && b.Ranked && len(a.Shape) == len(b.Shape) {
		for i := range a.Shape {
			if a.Shape[i].Unknown && !b.Shape[i].Unknown {
				a.Shape[i] = b.Shape[i]
			}
		}
	}
	return a
}
