package testgraph

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Transformer builds `layers` BERT-style self-attention blocks in a row
// (x → block → block …) with hidden size `hidden`; weights are filled with a
// cheap pattern so that multi-GiB models build quickly.
func Transformer(layers, hidden, heads int, seq any) *B {
	b := New(17)
	d := int64(hidden / heads)
	h := int64(hidden)
	x := b.Input("x", graph.Float32, 1, seq, hidden)
	for l := 0; l < layers; l++ {
		proj := func() string {
			y := b.Node("MatMul", []string{x, b.bigWeight(h, h)})
			y = b.Node("Reshape", []string{y, b.I64(1, -1, int64(heads), d)})
			return b.Node("Transpose", []string{y}, Ints("perm", 0, 2, 1, 3))
		}
		q, k, v := proj(), proj(), proj()
		kt := b.Node("Transpose", []string{k}, Ints("perm", 0, 1, 3, 2))
		s := b.Node("MatMul", []string{q, kt})
		s = b.Node("Div", []string{s, b.Scalar(8)})
		p := b.Node("Softmax", []string{s}, Int("axis", -1))
		o := b.Node("MatMul", []string{p, v})
		o = b.Node("Transpose", []string{o}, Ints("perm", 0, 2, 1, 3))
		o = b.Node("Reshape", []string{o, b.I64(1, -1, h)})
		o = b.Node("MatMul", []string{o, b.bigWeight(h, h)})
		x = b.Node("Add", []string{o, x})
	}
	b.rename(x, "out")
	return b
}

func (b *B) bigWeight(rows, cols int64) string {
	name := b.fresh("w")
	raw := make([]byte, 4*rows*cols)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	d := int32(graph.Float32)
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), DataType: &d, Dims: []int64{rows, cols}, RawData: raw})
	return name
}
