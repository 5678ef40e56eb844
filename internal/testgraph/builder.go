// Package testgraph builds small ONNX models in code, written the way
// PyTorch's exporters write attention, for table-driven tests.
package testgraph

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// B builds one graph.
type B struct {
	Opset int64
	g     *onnxpb.GraphProto
	n     int
	rng   *rand.Rand
	extra []*onnxpb.OperatorSetIdProto
}

// New starts a graph at the given default opset.
func New(opset int64) *B {
	return &B{Opset: opset, g: &onnxpb.GraphProto{Name: proto.String("test")}, rng: rand.New(rand.NewSource(1))}
}

// Dims accepts ints (static) and strings (symbolic).
func shapeProto(dims []any) *onnxpb.TensorShapeProto {
	s := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dp := &onnxpb.TensorShapeProto_Dimension{}
		switch x := d.(type) {
		case int:
			dp.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(x)}
		case int64:
			dp.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: x}
		case string:
			dp.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: x}
		}
		s.Dim = append(s.Dim, dp)
	}
	return s
}

func valueInfo(name string, dt graph.DType, dims []any) *onnxpb.ValueInfoProto {
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: shapeProto(dims)}}}}
}

// Input declares a graph input.
func (b *B) Input(name string, dt graph.DType, dims ...any) string {
	b.g.Input = append(b.g.Input, valueInfo(name, dt, dims))
	return name
}

// Output declares a graph output (type left to inference).
func (b *B) Output(name string) {
	b.g.Output = append(b.g.Output, &onnxpb.ValueInfoProto{Name: proto.String(name)})
}

func (b *B) fresh(op string) string {
	b.n++
	return fmt.Sprintf("%s_%d", op, b.n)
}

// Node adds a node with one output and returns the output name.
func (b *B) Node(op string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	return b.NodeN(op, "", inputs, 1, attrs...)[0]
}

// NodeN adds a node with n outputs in a domain.
func (b *B) NodeN(op, domain string, inputs []string, n int, attrs ...*onnxpb.AttributeProto) []string {
	name := b.fresh(op)
	var outs []string
	for i := 0; i < n; i++ {
		outs = append(outs, fmt.Sprintf("%s_out%d", name, i))
	}
	np := &onnxpb.NodeProto{Name: proto.String(name), OpType: proto.String(op), Input: inputs, Output: outs, Attribute: attrs}
	if domain != "" {
		np.Domain = proto.String(domain)
	}
	b.g.Node = append(b.g.Node, np)
	return outs
}

// RenameLastNode names the node added last, for tests whose expected
// message names it.
func (b *B) RenameLastNode(name string) { b.g.Node[len(b.g.Node)-1].Name = proto.String(name) }

// Import adds an opset import for a custom domain.
func (b *B) Import(domain string, version int64) {
	b.extra = append(b.extra, &onnxpb.OperatorSetIdProto{Domain: proto.String(domain), Version: proto.Int64(version)})
}

// Attribute helpers.
func Int(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}
func Float(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}
func Ints(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

// Tensor is a one-element tensor attribute (ConstantOfShape's value).
func Tensor(name string, dt graph.DType, v float64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: tensorProto("", dt, []int64{1}, []float64{v})}
}

func Str(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func tensorProto(name string, dt graph.DType, dims []int64, vals []float64) *onnxpb.TensorProto {
	raw, ok := graph.EncodeFloats(dt, vals)
	if !ok {
		panic("testgraph: cannot encode " + dt.String())
	}
	d := int32(dt)
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: &d, Dims: dims, RawData: raw}
}

// Const adds an initializer.
func (b *B) Const(dt graph.DType, dims []int64, vals ...float64) string {
	name := b.fresh("c")
	b.g.Initializer = append(b.g.Initializer, tensorProto(name, dt, dims, vals))
	return name
}

// Scalar adds a float32 scalar initializer.
func (b *B) Scalar(v float64) string { return b.Const(graph.Float32, nil, v) }

// ScalarOf adds a scalar initializer of a given type.
func (b *B) ScalarOf(dt graph.DType, v float64) string { return b.Const(dt, nil, v) }

// I64 adds an int64 vector initializer (encoded exactly, not via float64).
func (b *B) I64(vals ...int64) string {
	name := b.fresh("c")
	t := graph.NewInt64Tensor(name, []int64{int64(len(vals))}, vals)
	raw, _ := t.Raw()
	d := int32(graph.Int64)
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), DataType: &d, Dims: t.Dims, RawData: raw})
	return name
}

// ConstNode adds a Constant node holding an int64 vector (TorchScript style).
func (b *B) ConstNode(vals ...int64) string {
	f := make([]float64, len(vals))
	for i, v := range vals {
		f[i] = float64(v)
	}
	t := tensorProto("", graph.Int64, []int64{int64(len(vals))}, f)
	return b.Node("Constant", nil, &onnxpb.AttributeProto{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t})
}

// Weight adds a random float initializer.
func (b *B) Weight(dt graph.DType, dims ...int64) string {
	return b.random(dt, dims, func() float64 { return b.rng.NormFloat64() * 0.2 })
}

// random adds an initializer of the given shape filled by gen.
func (b *B) random(dt graph.DType, dims []int64, gen func() float64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = gen()
	}
	return b.Const(dt, dims, vals...)
}

// Proto returns the model.
func (b *B) Proto() *onnxpb.ModelProto {
	m := &onnxpb.ModelProto{
		IrVersion:    proto.Int64(8),
		ProducerName: proto.String("attnopt-testgraph"),
		OpsetImport:  append([]*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(b.Opset)}}, b.extra...),
		Graph:        b.g,
	}
	return m
}

// Bytes serializes the model.
func (b *B) Bytes() []byte {
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(b.Proto())
	if err != nil {
		panic(err)
	}
	return data
}

// Model loads the built model into the IR.
func (b *B) Model() *graph.Model {
	m, err := graph.LoadBytes(b.Bytes(), "")
	if err != nil {
		panic(err)
	}
	return m
}

// NegInf is -inf as used by masked_fill.
var NegInf = math.Inf(-1)
