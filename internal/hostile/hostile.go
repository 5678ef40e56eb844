// Package hostile builds malformed and adversarial model files, one per class
// of the hardening audit (issue 13), for the CLI's hostile-input table and as
// seeds of the fuzz targets.
package hostile

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

// Case is one hostile input. Build writes it (and any data files) into dir
// and returns the model's path.
type Case struct {
	Name string
	// Valid inputs must load (exit 0 for inspect); the rest must be refused
	// with exit 2 and a message containing Want.
	Valid bool
	Want  string
	Build func(dir string) (string, error)
}

// base is a small 4-D attention block with a scale on the scores:
// q,k,v → Transpose(k) → MatMul → Mul → Softmax → MatMul → out.
func base() *onnxpb.ModelProto {
	return testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 8, D: 4, Scale: "mul"}).Proto()
}

func node(m *onnxpb.ModelProto, op string) *onnxpb.NodeProto {
	for _, n := range m.Graph.Node {
		if n.GetOpType() == op {
			return n
		}
	}
	panic("hostile: no " + op)
}

// write marshals m to dir/model.onnx.
func write(dir string, m *onnxpb.ModelProto) (string, error) {
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return "", err
	}
	return writeBytes(dir, data)
}

func writeBytes(dir string, data []byte) (string, error) {
	p := filepath.Join(dir, "model.onnx")
	return p, os.WriteFile(p, data, 0o644)
}

// mutate is a Case built by editing the base model.
func mutate(name, want string, f func(m *onnxpb.ModelProto)) Case {
	return Case{Name: name, Want: want, Build: func(dir string) (string, error) {
		m := base()
		f(m)
		return write(dir, m)
	}}
}

func dim(v int64) *onnxpb.TensorShapeProto_Dimension {
	return &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: v}}
}

// Models are the in-memory hostile models (no data files), for fuzz seeds.
func Models() [][]byte {
	var out [][]byte
	for _, c := range Cases() {
		dir, err := os.MkdirTemp("", "hostile")
		if err != nil {
			continue
		}
		if p, err := c.Build(dir); err == nil {
			// Only regular files: reading a FIFO would block.
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				os.RemoveAll(dir)
				continue
			}
			if data, err := os.ReadFile(p); err == nil {
				out = append(out, data)
			}
		}
		os.RemoveAll(dir)
	}
	return out
}

// Cases lists every class; external-data classes are in external.go, fused
// ops that ONNX Runtime refuses in fused.go, PyTorch's files in foreign.go.
func Cases() []Case {
	cs := []Case{
		{Name: "unused softmax chain", Valid: true, Build: func(dir string) (string, error) {
			// MatMul → Mul → Softmax whose output nothing reads (onlyUse
			// indexed an empty use list).
			b := testgraph.New(17)
			q := b.Input("q", graph.Float32, 1, 8, 4)
			k := b.Input("k", graph.Float32, 1, 4, 8)
			s := b.Node("MatMul", []string{q, k})
			s = b.Node("Mul", []string{s, b.Scalar(0.5)})
			b.Node("Softmax", []string{s}, testgraph.Int("axis", -1))
			o := b.Node("Identity", []string{q})
			b.Output(o)
			return writeBytes(dir, b.Bytes())
		}},
		{Name: "single dim of 10^17", Valid: true, Build: func(dir string) (string, error) {
			// 4e17 bytes fit in an int64: loadable, but validation must
			// refuse to generate it rather than allocate.
			b := testgraph.New(17)
			x := b.Input("x", graph.Float32, int64(1e17))
			b.Output(b.Node("Relu", []string{x}))
			return writeBytes(dir, b.Bytes())
		}},
		{Name: "model is a FIFO", Want: "not a regular file", Build: func(dir string) (string, error) {
			p := filepath.Join(dir, "model.onnx")
			return p, syscall.Mkfifo(p, 0o644)
		}},
		{Name: "model is /dev/zero", Want: "not a regular file", Build: func(string) (string, error) {
			return "/dev/zero", nil
		}},
		{Name: "empty file", Want: "not an ONNX model", Build: func(dir string) (string, error) { return writeBytes(dir, nil) }},
		{Name: "not protobuf", Want: "not a valid ONNX model", Build: func(dir string) (string, error) {
			return writeBytes(dir, []byte("\xff\xff\xff\xffnot a model"))
		}},
		{Name: "truncated", Want: "not a valid ONNX model", Build: func(dir string) (string, error) {
			data, _ := proto.Marshal(base())
			return writeBytes(dir, data[:len(data)/2])
		}},
		mutate("MatMul with one input", `node "MatMul_`, func(m *onnxpb.ModelProto) {
			n := node(m, "MatMul")
			n.Input = n.Input[:1]
		}),
		mutate("Mul with one input", `node "Mul_`, func(m *onnxpb.ModelProto) {
			n := node(m, "Mul")
			n.Input = n.Input[:1]
		}),
		mutate("Transpose without input", `node "Transpose_`, func(m *onnxpb.ModelProto) {
			node(m, "Transpose").Input = nil
		}),
		mutate("Softmax with an empty required input", `node "Softmax_`, func(m *onnxpb.ModelProto) {
			node(m, "Softmax").Input = []string{""}
		}),
		mutate("Softmax with two outputs", `node "Softmax_`, func(m *onnxpb.ModelProto) {
			n := node(m, "Softmax")
			n.Output = append(n.Output, "extra")
		}),
		mutate("dims of 10^18", `10^18`, func(m *onnxpb.ModelProto) {
			for _, vi := range m.Graph.Input {
				vi.Type.GetTensorType().Shape.Dim[2] = dim(1e18)
			}
		}),
		mutate("dims whose product overflows", `bytes`, func(m *onnxpb.ModelProto) {
			d := m.Graph.Input[0].Type.GetTensorType().Shape.Dim
			d[0], d[1] = dim(1<<40), dim(1<<40)
		}),
		mutate("unknown input dtype", `data type 99`, func(m *onnxpb.ModelProto) {
			m.Graph.Input[0].Type.GetTensorType().ElemType = proto.Int32(99)
		}),
		mutate("unknown initializer dtype", `data type 77`, func(m *onnxpb.ModelProto) {
			m.Graph.Initializer[0].DataType = proto.Int32(77)
		}),
		mutate("Cast to an unknown dtype", `Cast`, func(m *onnxpb.ModelProto) {
			n := node(m, "Mul")
			n.OpType = proto.String("Cast")
			n.Input = n.Input[:1]
			n.Attribute = []*onnxpb.AttributeProto{testgraph.Int("to", 1234)}
		}),
		mutate("operands of mixed dtypes", `another input is`, func(m *onnxpb.ModelProto) {
			// The Mul's scalar becomes int64 (8 bytes) beside float scores.
			for _, t := range m.Graph.Initializer {
				if t.GetName() == node(m, "Mul").Input[1] {
					t.DataType = proto.Int32(int32(graph.Int64))
					t.RawData = make([]byte, 8)
				}
			}
		}),
		mutate("attribute given twice", `attribute "axis" twice`, func(m *onnxpb.ModelProto) {
			node(m, "Softmax").Attribute = []*onnxpb.AttributeProto{testgraph.Int("axis", -1), testgraph.Int("axis", 1)}
		}),
		mutate("empty op_type", `empty op_type`, func(m *onnxpb.ModelProto) {
			node(m, "Mul").OpType = proto.String("")
		}),
		mutate("domain not imported", `"com.example"`, func(m *onnxpb.ModelProto) {
			node(m, "Mul").Domain = proto.String("com.example")
		}),
		mutate("no opset import", `opset_import`, func(m *onnxpb.ModelProto) {
			m.OpsetImport = nil
		}),
		mutate("float axis on Softmax", `"axis"`, func(m *onnxpb.ModelProto) {
			node(m, "Softmax").Attribute = []*onnxpb.AttributeProto{testgraph.Float("axis", -1)}
		}),
		mutate("attribute of undefined type", `attribute "axis"`, func(m *onnxpb.ModelProto) {
			a := testgraph.Int("axis", -1)
			a.Type = onnxpb.AttributeProto_AttributeType(99).Enum()
			node(m, "Softmax").Attribute = []*onnxpb.AttributeProto{a}
		}),
		mutate("perm of 10^18", `perm`, func(m *onnxpb.ModelProto) {
			node(m, "Transpose").Attribute = []*onnxpb.AttributeProto{testgraph.Ints("perm", 0, 1, 1e18, 2)}
		}),
		mutate("perm repeating an axis", `perm`, func(m *onnxpb.ModelProto) {
			node(m, "Transpose").Attribute = []*onnxpb.AttributeProto{testgraph.Ints("perm", 0, 1, 2, 2)}
		}),
		mutate("perm of the wrong rank", `perm`, func(m *onnxpb.ModelProto) {
			node(m, "Transpose").Attribute = []*onnxpb.AttributeProto{testgraph.Ints("perm", 1, 0)}
		}),
		mutate("Q and K that cannot multiply", `cannot multiply`, func(m *onnxpb.ModelProto) {
			// K is (1,2,8,4); without the Transpose, Q·K is (8×4)·(8×4).
			n := node(m, "MatMul")
			n.Input[1] = "k"
		}),
		mutate("Softmax axis out of range", `axis 7`, func(m *onnxpb.ModelProto) {
			node(m, "Softmax").Attribute = []*onnxpb.AttributeProto{testgraph.Int("axis", 7)}
		}),
		mutate("graph output never computed", `never computed`, func(m *onnxpb.ModelProto) {
			m.Graph.Output[0].Name = proto.String("nowhere")
		}),
		mutate("value read but never defined", `never defined`, func(m *onnxpb.ModelProto) {
			node(m, "Softmax").Input[0] = "ghost"
		}),
		mutate("cycle", `cycle`, func(m *onnxpb.ModelProto) {
			node(m, "MatMul").Input[0] = node(m, "Softmax").Output[0]
		}),
		mutate("negative tensor dim", `negative dim`, func(m *onnxpb.ModelProto) {
			m.Graph.Initializer[0].Dims = []int64{-1}
		}),
		mutate("tensor dims of 2^62", `dims`, func(m *onnxpb.ModelProto) {
			m.Graph.Initializer[0].Dims = []int64{1 << 62, 4}
		}),
		mutate("initializer without data", `holds 0`, func(m *onnxpb.ModelProto) {
			m.Graph.Initializer[0].RawData = nil
			m.Graph.Initializer[0].Dims = []int64{16}
		}),
		mutate("subgraph reads an undefined name", `never defined`, func(m *onnxpb.ModelProto) {
			branch := &onnxpb.GraphProto{Name: proto.String("b"),
				Node:   []*onnxpb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"ghost2"}, Output: []string{"bo"}}},
				Output: []*onnxpb.ValueInfoProto{{Name: proto.String("bo")}}}
			m.Graph.Node = append(m.Graph.Node, &onnxpb.NodeProto{OpType: proto.String("If"), Input: []string{"cond"}, Output: []string{"if_out"},
				Attribute: []*onnxpb.AttributeProto{graphAttr("then_branch", branch), graphAttr("else_branch", branch)}})
			m.Graph.Input = append(m.Graph.Input, &onnxpb.ValueInfoProto{Name: proto.String("cond"), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(graph.Bool)), Shape: &onnxpb.TensorShapeProto{}}}}})
		}),
		mutate("If without its branches", `then_branch`, func(m *onnxpb.ModelProto) {
			m.Graph.Node = append(m.Graph.Node, &onnxpb.NodeProto{OpType: proto.String("If"), Input: []string{"q"}, Output: []string{"if_out"}})
		}),
	}
	return append(append(append(cs, externalCases()...), FusedCases()...), ForeignCases()...)
}

func graphAttr(name string, g *onnxpb.GraphProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: g}
}
