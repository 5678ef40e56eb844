package passes

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// emitter adds the nodes of one replacement, inferring each output's type as
// it goes, and names them after the site.
type emitter struct {
	g      *graph.Graph
	prefix string
	opset  int64
}

func newEmitter(g *graph.Graph, prefix string) *emitter {
	return &emitter{g: g, prefix: prefix, opset: g.Model().Opset("")}
}

// op adds a one-output node and returns its output.
func (e *emitter) op(op, domain string, ins []*graph.Value, attrs ...*graph.Attr) *graph.Value {
	out := e.g.NewValue(e.prefix+"/"+op+"_out", graph.Type{})
	n := e.g.AddNode(op, domain, e.prefix+"/"+op, ins, []*graph.Value{out}, attrs...)
	graph.InferNode(e.g, n)
	return out
}

func (e *emitter) i64(vals ...int64) *graph.Value {
	return e.g.AddInit(e.prefix+"/const", graph.NewInt64Tensor("", []int64{int64(len(vals))}, vals))
}

// i64Scalar is an int64 scalar constant.
func (e *emitter) i64Scalar(v int64) *graph.Value {
	return e.g.AddInit(e.prefix+"/const", graph.NewInt64Tensor("", nil, []int64{v}))
}

// positions is Range(0, n) for an int64 scalar n: token indices 0 … n-1.
func (e *emitter) positions(n *graph.Value) *graph.Value {
	return e.op("Range", "", []*graph.Value{e.i64Scalar(0), n, e.i64Scalar(1)})
}

func (e *emitter) scalar(dt graph.DType, v float64) *graph.Value {
	raw, _ := graph.EncodeFloats(dt, []float64{v})
	return e.g.AddInit(e.prefix+"/const", graph.NewTensor("", dt, nil, raw))
}

// unsqueeze inserts size-1 axes, with axes as an attribute before opset 13.
func (e *emitter) unsqueeze(v *graph.Value, axes ...int64) *graph.Value {
	if e.opset < 13 {
		return e.op("Unsqueeze", "", []*graph.Value{v}, graph.IntsAttr("axes", axes))
	}
	return e.op("Unsqueeze", "", []*graph.Value{v, e.i64(axes...)})
}

func (e *emitter) squeeze(v *graph.Value, axes ...int64) *graph.Value {
	if e.opset < 13 {
		return e.op("Squeeze", "", []*graph.Value{v}, graph.IntsAttr("axes", axes))
	}
	return e.op("Squeeze", "", []*graph.Value{v, e.i64(axes...)})
}

// shapeSlice is Shape(v)[lo:hi], the shape arithmetic rewrites need for
// dims known only at run time.
func (e *emitter) shapeSlice(v *graph.Value, lo, hi int64) *graph.Value {
	return e.op("Slice", "", []*graph.Value{e.op("Shape", "", []*graph.Value{v}), e.i64(lo), e.i64(hi)})
}

func (e *emitter) transpose(v *graph.Value, perm ...int64) *graph.Value {
	return e.op("Transpose", "", []*graph.Value{v}, graph.IntsAttr("perm", perm))
}

// swapLast2 transposes the last two axes.
func (e *emitter) swapLast2(v *graph.Value) *graph.Value {
	r := v.Type.Rank()
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[r-1], perm[r-2] = perm[r-2], perm[r-1]
	return e.transpose(v, perm...)
}

func (e *emitter) reshape(v *graph.Value, target ...int64) *graph.Value {
	return e.op("Reshape", "", []*graph.Value{v, e.i64(target...)})
}

// boolToBias turns a bool mask (true = attend) into 0 / fill in dtype dt.
func (e *emitter) boolToBias(cond *graph.Value, inverted bool, fill float64, dt graph.DType) *graph.Value {
	keep, drop := e.scalar(dt, 0), e.scalar(dt, fill)
	if inverted {
		keep, drop = drop, keep
	}
	return e.op("Where", "", []*graph.Value{cond, keep, drop})
}

var negInfinity = math.Inf(-1)
