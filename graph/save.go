package graph

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ToProto builds the ModelProto of the current IR. Parts that were loaded and
// not changed are the loaded protobuf messages themselves (not copies), so a
// model with 1 GiB of weights is not duplicated in memory.
func (m *Model) ToProto() *onnxpb.ModelProto {
	out := shallowClone(m.pb)
	out.OpsetImport = nil
	for i, o := range m.Opsets {
		if i < len(m.pb.OpsetImport) && m.pb.OpsetImport[i].GetDomain() == o.Domain && m.pb.OpsetImport[i].GetVersion() == o.Version {
			out.OpsetImport = append(out.OpsetImport, m.pb.OpsetImport[i])
			continue
		}
		out.OpsetImport = append(out.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(o.Domain), Version: proto.Int64(o.Version)})
	}
	out.Graph = m.Graph.toProto()
	return out
}

func shallowClone[T proto.Message](m T) T {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	dst.SetUnknown(src.GetUnknown())
	return dst.Interface().(T)
}

func (g *Graph) toProto() *onnxpb.GraphProto {
	out := shallowClone(g.pb)
	out.Node = make([]*onnxpb.NodeProto, len(g.Nodes))
	for i, n := range g.Nodes {
		out.Node[i] = n.toProto()
	}
	out.Initializer = make([]*onnxpb.TensorProto, 0, len(g.Inits))
	for _, v := range g.Inits {
		out.Initializer = append(out.Initializer, v.Const.toProto(v.Name))
	}
	out.Input = nil
	listed := map[string]bool{}
	for _, name := range g.inputOrder {
		v := g.values[name]
		if v == nil || (v.Kind == KindInit && !g.initInputs[name]) || (v.Kind == KindInput && !containsValue(g.Inputs, v)) {
			continue
		}
		out.Input = append(out.Input, v.valueInfo())
		listed[name] = true
	}
	for _, v := range g.Inputs {
		if !listed[v.Name] {
			out.Input = append(out.Input, v.valueInfo())
		}
	}
	out.Output = make([]*onnxpb.ValueInfoProto, len(g.Outputs))
	for i, v := range g.Outputs {
		out.Output[i] = v.valueInfo()
	}
	out.ValueInfo = nil
	for _, vi := range g.valueInfo {
		v := g.values[vi.GetName()]
		if (v != nil && (v.Kind != KindNode || v.producer != nil) && consistent(typeFromProto(vi.GetType()), v.Type)) || (v == nil && g.staleInfo[vi.GetName()]) {
			out.ValueInfo = append(out.ValueInfo, vi)
		}
	}
	return out
}

// consistent: a declared type (value_info) that does not contradict the
// value's current one. A loaded entry whose name a rewrite gave to a value
// of another type is dropped rather than written stale.
func consistent(declared, cur Type) bool {
	if declared.DType != Undefined && cur.DType != Undefined && declared.DType != cur.DType {
		return false
	}
	if !declared.Ranked || !cur.Ranked {
		return true
	}
	if len(declared.Shape) != len(cur.Shape) {
		return false
	}
	for i, d := range declared.Shape {
		if c := cur.Shape[i]; d.Static() && c.Static() && d.C != c.C {
			return false
		}
	}
	return true
}

func containsValue(vs []*Value, v *Value) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

func (v *Value) valueInfo() *onnxpb.ValueInfoProto {
	if v.info != nil && v.info.GetName() == v.Name {
		return v.info
	}
	if v.info != nil {
		vi := shallowClone(v.info)
		vi.Name = proto.String(v.Name)
		return vi
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(v.Name), Type: typeToProto(v.Type)}
}

func typeToProto(t Type) *onnxpb.TypeProto {
	tt := &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(t.DType))}
	if t.Ranked {
		tt.Shape = &onnxpb.TensorShapeProto{}
		for _, d := range t.Shape {
			dp := &onnxpb.TensorShapeProto_Dimension{}
			if v, ok := d.Value(); ok {
				dp.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: v}
			} else if !d.Unknown {
				dp.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d.String()}
			}
			tt.Shape.Dim = append(tt.Shape.Dim, dp)
		}
	}
	return &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}
}

func (n *Node) toProto() *onnxpb.NodeProto {
	var out *onnxpb.NodeProto
	if n.pb != nil {
		out = shallowClone(n.pb)
	} else {
		out = &onnxpb.NodeProto{}
	}
	out.Input = make([]string, len(n.Inputs))
	for i, v := range n.Inputs {
		if v != nil {
			out.Input[i] = v.Name
		}
	}
	out.Output = make([]string, len(n.Outputs))
	for i, v := range n.Outputs {
		if v != nil {
			out.Output[i] = v.Name
		}
	}
	setStr := func(cur *string, s string) *string {
		if cur == nil && s == "" {
			return nil
		}
		return proto.String(s)
	}
	out.Name = setStr(out.Name, n.Name)
	out.OpType = proto.String(n.OpType)
	out.Domain = setStr(out.Domain, n.Domain)
	out.Attribute = make([]*onnxpb.AttributeProto, len(n.Attrs))
	for i, a := range n.Attrs {
		out.Attribute[i] = a.toProto()
	}
	if len(out.Attribute) == 0 {
		out.Attribute = nil
	}
	return out
}

func (a *Attr) toProto() *onnxpb.AttributeProto {
	if a.pb != nil {
		return a.pb
	}
	ap := &onnxpb.AttributeProto{Name: proto.String(a.Name)}
	t := onnxpb.AttributeProto_AttributeType(a.Kind)
	ap.Type = &t
	switch a.Kind {
	case AttrFloat:
		ap.F = proto.Float32(a.F)
	case AttrInt:
		ap.I = proto.Int64(a.I)
	case AttrString:
		ap.S = []byte(a.S)
	case AttrFloats:
		ap.Floats = a.Floats
	case AttrInts:
		ap.Ints = a.Ints
	case AttrStrings:
		for _, s := range a.Strings {
			ap.Strings = append(ap.Strings, []byte(s))
		}
	case AttrTensor:
		ap.T = a.T.toProto(a.T.Name)
	}
	return ap
}

func (t *Tensor) toProto(name string) *onnxpb.TensorProto {
	if t.pb != nil && t.pb.GetName() == name {
		return t.pb
	}
	if t.pb != nil {
		tp := shallowClone(t.pb)
		tp.Name = proto.String(name)
		return tp
	}
	dt := int32(t.DType)
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: &dt, Dims: t.Dims, RawData: t.raw}
}

// Marshal serializes the model deterministically: the same IR gives the
// same bytes.
func (m *Model) Marshal() ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m.ToProto())
}

// SaveResult says how external data reached the output.
type SaveResult struct {
	ExternalFiles []string // locations the output refers to
	Copied        bool     // tensors were written into the output's own data file
	// Externalized: the model exceeded protobuf's 2 GiB limit, so its
	// inline initializers were moved into the data file.
	Externalized bool
	DataFile     string // the output's data file (DataFileName), when written
}

// MaxProtoBytes is protobuf's limit on one message; ONNX Runtime cannot parse
// a larger model file.
const MaxProtoBytes = 2<<30 - 1

// externalizeMin is the smallest initializer moved to external data when a
// model is too large for one protobuf (onnx's convert_model_to_external_data
// threshold).
const externalizeMin = 1024

// dataAlign aligns tensors in a data file so that runtimes can map them.
const dataAlign = 4096

// DataFileName is the external-data file a save to out may write: named
// after the output, so it is never another model's file.
func DataFileName(out string) string { return filepath.Base(out) + ".data" }

// Save writes the model to path atomically (temporary files, then renames).
// External data stays referenced in place when the output is in the source
// folder; otherwise it is copied into the output's own data file
// (DataFileName). A model over 2 GiB has its initializers moved there too.
func (m *Model) Save(path string) (SaveResult, error) {
	return m.SaveWith(path, MaxProtoBytes)
}

// SaveWith is Save with another protobuf size limit (for tests).
func (m *Model) SaveWith(path string, maxProto int64) (res SaveResult, err error) {
	if err := m.VerifyForSave(); err != nil {
		return res, fmt.Errorf("the model fails the final structural check, nothing written (a bug in attnopt): %w", err)
	}
	outDir := filepath.Dir(path)
	removeStaleTemps(outDir)
	pb := m.ToProto()
	inits := pb.Graph.Initializer
	var data *dataWriter
	defer func() {
		if err != nil && data != nil {
			discardTemp(data.f)
		}
	}()
	newData := func() error {
		if data != nil {
			return nil
		}
		f, err := createTemp(outDir)
		if err != nil {
			return err
		}
		data = &dataWriter{f: f, name: DataFileName(path)}
		return nil
	}
	if err := m.CheckCarry(outDir); err != nil {
		return res, err
	}
	if len(m.externalLocations()) > 0 && !sameDir(outDir, m.src.dir) {
		if err := newData(); err != nil {
			return res, err
		}
		for i, v := range m.Graph.Inits {
			if v.Const.ext == nil {
				continue
			}
			if inits[i], err = data.addExternal(v.Const, inits[i]); err != nil {
				return res, err
			}
		}
		res.Copied = true
	}
	if int64(proto.Size(pb)) > maxProto {
		if err := newData(); err != nil {
			return res, err
		}
		for i, v := range m.Graph.Inits {
			t := v.Const
			if t.ext != nil || t.DType == String || t.ByteSize() < externalizeMin {
				continue
			}
			if inits[i], err = data.addInline(t, inits[i]); err != nil {
				return res, err
			}
		}
		res.Externalized, res.Copied = true, true
		if n := int64(proto.Size(pb)); n > maxProto {
			return res, fmt.Errorf("the model is %d bytes without its initializers, over protobuf's limit of %d", n, maxProto)
		}
	}
	tmp, err := createTemp(outDir)
	if err != nil {
		return res, err
	}
	if err := writeModel(tmp, pb); err != nil {
		discardTemp(tmp)
		return res, err
	}
	if err := tmp.Close(); err != nil {
		discardTemp(tmp)
		return res, err
	}
	// The data first: the model names it.
	if data != nil {
		if err := data.f.Close(); err != nil {
			discardTemp(tmp)
			return res, err
		}
		if err := renameTemp(data.f.Name(), filepath.Join(outDir, data.name)); err != nil {
			discardTemp(tmp)
			return res, err
		}
		res.DataFile = data.name
	}
	if err := renameTemp(tmp.Name(), path); err != nil {
		if data != nil {
			os.Remove(filepath.Join(outDir, data.name))
		}
		return res, err
	}
	res.ExternalFiles = externalLocations(pb.Graph)
	return res, nil
}

// CheckCarry fails when the model's external data cannot be carried to
// outDir: only the graph's own initializers can be copied into the
// output's data file.
func (m *Model) CheckCarry(outDir string) error {
	if !sameDir(outDir, m.src.dir) && hasNestedExternal(m.ToProto().Graph) {
		return &InputError{Msg: "a tensor outside the graph's initializers (a Constant's or a subgraph's) keeps its data in an external file, which attnopt carries only beside the input; write the output into the input's folder"}
	}
	return nil
}

// hasNestedExternal: some tensor other than the graph's own initializers
// (node attributes, subgraph initializers and attributes) is external.
func hasNestedExternal(g *onnxpb.GraphProto) bool {
	ext := func(t *onnxpb.TensorProto) bool {
		return t != nil && t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL
	}
	var nodes func(ns []*onnxpb.NodeProto) bool
	var sub func(g *onnxpb.GraphProto) bool
	sub = func(g *onnxpb.GraphProto) bool {
		for _, t := range g.Initializer {
			if ext(t) {
				return true
			}
		}
		return nodes(g.Node)
	}
	nodes = func(ns []*onnxpb.NodeProto) bool {
		for _, n := range ns {
			for _, a := range n.Attribute {
				if ext(a.T) {
					return true
				}
				for _, t := range a.Tensors {
					if ext(t) {
						return true
					}
				}
				for _, g := range append([]*onnxpb.GraphProto{a.G}, a.Graphs...) {
					if g != nil && sub(g) {
						return true
					}
				}
			}
		}
		return false
	}
	return nodes(g.Node)
}

// dataWriter appends tensors to the output's data file.
type dataWriter struct {
	f    *os.File
	name string
	off  int64
}

// place pads to the next aligned offset and returns the tensor's copy of tp
// pointing at it.
func (w *dataWriter) place(tp *onnxpb.TensorProto, size int64) (*onnxpb.TensorProto, error) {
	if pad := (dataAlign - w.off%dataAlign) % dataAlign; pad > 0 {
		if _, err := w.f.Write(make([]byte, pad)); err != nil {
			return nil, err
		}
		w.off += pad
	}
	out := shallowClone(tp)
	out.RawData, out.FloatData, out.Int32Data, out.Int64Data, out.DoubleData, out.Uint64Data = nil, nil, nil, nil, nil, nil
	out.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
	out.ExternalData = []*onnxpb.StringStringEntryProto{
		{Key: proto.String("location"), Value: proto.String(w.name)},
		{Key: proto.String("offset"), Value: proto.String(strconv.FormatInt(w.off, 10))},
		{Key: proto.String("length"), Value: proto.String(strconv.FormatInt(size, 10))},
	}
	w.off += size
	return out, nil
}

// addExternal streams an external tensor's bytes from its source file.
func (w *dataWriter) addExternal(t *Tensor, tp *onnxpb.TensorProto) (*onnxpb.TensorProto, error) {
	size := t.ByteSize()
	in, err := t.ext.src.openRange(t.ext.location, t.ext.offset, size)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := w.place(tp, size)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(w.f, io.NewSectionReader(in, t.ext.offset, size))
	if err == nil && n != size {
		err = fmt.Errorf("external data %q ended after %d of %d bytes", t.ext.location, n, size)
	}
	if err != nil {
		return nil, fmt.Errorf("copying tensor %q: %w", t.Name, err)
	}
	return out, nil
}

// addInline moves an inline tensor's bytes into the data file.
func (w *dataWriter) addInline(t *Tensor, tp *onnxpb.TensorProto) (*onnxpb.TensorProto, error) {
	raw, err := t.Raw()
	if err != nil {
		return nil, err
	}
	out, err := w.place(tp, int64(len(raw)))
	if err != nil {
		return nil, err
	}
	if _, err := w.f.Write(raw); err != nil {
		return nil, err
	}
	return out, nil
}

func (m *Model) externalLocations() []string {
	seen := map[string]bool{}
	var locs []string
	for _, v := range m.Graph.Inits {
		if loc := v.Const.ExternalLocation(); loc != "" && !seen[loc] {
			seen[loc] = true
			locs = append(locs, loc)
		}
	}
	sort.Strings(locs)
	return locs
}

// externalLocations lists the data files a written graph refers to.
func externalLocations(g *onnxpb.GraphProto) []string {
	seen := map[string]bool{}
	var locs []string
	for _, t := range g.Initializer {
		if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
			continue
		}
		for _, kv := range t.ExternalData {
			if kv.GetKey() == "location" && !seen[kv.GetValue()] {
				seen[kv.GetValue()] = true
				locs = append(locs, kv.GetValue())
			}
		}
	}
	sort.Strings(locs)
	return locs
}

// ReadPaths are the files loading and saving m reads: its external data
// files (the model file itself is the caller's), for refusing an output that
// would overwrite one.
func (m *Model) ReadPaths() []string {
	var out []string
	for _, loc := range m.externalLocations() {
		out = append(out, filepath.Join(m.src.dir, filepath.FromSlash(loc)))
	}
	return out
}

func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
