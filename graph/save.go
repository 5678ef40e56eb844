package graph

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

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
		if (v != nil && (v.Kind != KindNode || v.producer != nil)) || (v == nil && g.staleInfo[vi.GetName()]) {
			out.ValueInfo = append(out.ValueInfo, vi)
		}
	}
	return out
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
	Copied        bool     // the files were copied beside the output
}

// Save writes the model to path atomically (temporary file, then rename).
// External data files are copied beside the output with the same names and
// layout, or referenced in place when the output is in the source folder.
func (m *Model) Save(path string) (SaveResult, error) {
	var res SaveResult
	data, err := m.Marshal()
	if err != nil {
		return res, err
	}
	res.ExternalFiles = m.externalLocations()
	outDir := filepath.Dir(path)
	if len(res.ExternalFiles) > 0 && !sameDir(outDir, m.src.dir) {
		res.Copied = true
		for _, loc := range res.ExternalFiles {
			if err := m.copyExternal(loc, outDir); err != nil {
				return res, err
			}
		}
	}
	return res, WriteFileAtomic(path, data)
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

func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

func (m *Model) copyExternal(loc, outDir string) error {
	in, err := m.src.open(loc)
	if err != nil {
		return err
	}
	defer in.Close()
	dst := filepath.Join(outDir, filepath.FromSlash(loc))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".attnopt-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("copying external data %q: %w", loc, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// WriteFileAtomic writes data to a temporary file beside path and renames it.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
