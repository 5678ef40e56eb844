// Package emit adds the nodes of one replacement to a graph, inferring each
// output's type as it goes and naming the nodes after the site: the one
// way stage 1 (passes/canonical), the lowerings (passes/lower) and the
// approximate plans write ONNX nodes.
package emit

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Emitter adds the nodes of one replacement to G, named Prefix/Op.
type Emitter struct {
	G      *graph.Graph
	Prefix string
	Opset  int64 // the model's default-domain opset, which decides some node forms
}

// New is an emitter for g whose nodes are named after prefix.
func New(g *graph.Graph, prefix string) *Emitter {
	return &Emitter{G: g, Prefix: prefix, Opset: g.Model().Opset("")}
}

// Op adds a one-output node and returns its output.
func (e *Emitter) Op(op, domain string, ins []*graph.Value, attrs ...*graph.Attr) *graph.Value {
	out := e.G.NewValue(e.Prefix+"/"+op+"_out", graph.Type{})
	n := e.G.AddNode(op, domain, e.Prefix+"/"+op, ins, []*graph.Value{out}, attrs...)
	graph.InferNode(e.G, n)
	return out
}

func (e *Emitter) I64(vals ...int64) *graph.Value {
	return e.G.AddInit(e.Prefix+"/const", graph.NewInt64Tensor("", []int64{int64(len(vals))}, vals))
}

// I64Scalar is an int64 scalar constant.
func (e *Emitter) I64Scalar(v int64) *graph.Value {
	return e.G.AddInit(e.Prefix+"/const", graph.NewInt64Tensor("", nil, []int64{v}))
}

// Positions is Range(0, n) for an int64 scalar n: token indices 0 … n-1.
func (e *Emitter) Positions(n *graph.Value) *graph.Value {
	return e.Op("Range", "", []*graph.Value{e.I64Scalar(0), n, e.I64Scalar(1)})
}

func (e *Emitter) Scalar(dt graph.DType, v float64) *graph.Value {
	raw, _ := graph.EncodeFloats(dt, []float64{v})
	return e.G.AddInit(e.Prefix+"/const", graph.NewTensor("", dt, nil, raw))
}

// Unsqueeze inserts size-1 axes, with axes as an attribute before opset 13.
func (e *Emitter) Unsqueeze(v *graph.Value, axes ...int64) *graph.Value {
	if e.Opset < 13 {
		return e.Op("Unsqueeze", "", []*graph.Value{v}, graph.IntsAttr("axes", axes))
	}
	return e.Op("Unsqueeze", "", []*graph.Value{v, e.I64(axes...)})
}

func (e *Emitter) Squeeze(v *graph.Value, axes ...int64) *graph.Value {
	if e.Opset < 13 {
		return e.Op("Squeeze", "", []*graph.Value{v}, graph.IntsAttr("axes", axes))
	}
	return e.Op("Squeeze", "", []*graph.Value{v, e.I64(axes...)})
}

// ShapeSlice is Shape(v)[lo:hi], the shape arithmetic rewrites need for
// dims known only at run time.
func (e *Emitter) ShapeSlice(v *graph.Value, lo, hi int64) *graph.Value {
	return e.Op("Slice", "", []*graph.Value{e.Op("Shape", "", []*graph.Value{v}), e.I64(lo), e.I64(hi)})
}

func (e *Emitter) Transpose(v *graph.Value, perm ...int64) *graph.Value {
	return e.Op("Transpose", "", []*graph.Value{v}, graph.IntsAttr("perm", perm))
}

// SwapLast2 transposes the last two axes.
func (e *Emitter) SwapLast2(v *graph.Value) *graph.Value {
	r := v.Type.Rank()
	perm := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[r-1], perm[r-2] = perm[r-2], perm[r-1]
	return e.Transpose(v, perm...)
}

func (e *Emitter) Reshape(v *graph.Value, target ...int64) *graph.Value {
	return e.Op("Reshape", "", []*graph.Value{v, e.I64(target...)})
}

// BoolToBias turns a bool mask (true = attend) into 0 / fill in dtype dt.
func (e *Emitter) BoolToBias(cond *graph.Value, inverted bool, fill float64, dt graph.DType) *graph.Value {
	keep, drop := e.Scalar(dt, 0), e.Scalar(dt, fill)
	if inverted {
		keep, drop = drop, keep
	}
	return e.Op("Where", "", []*graph.Value{cond, keep, drop})
}

// ReduceMaxLast is ReduceMax over the last axis, keeping it (axes are an
// attribute before opset 18).
func (e *Emitter) ReduceMaxLast(v *graph.Value) *graph.Value {
	if e.Opset < 18 {
		return e.Op("ReduceMax", "", []*graph.Value{v}, graph.IntsAttr("axes", []int64{-1}), graph.IntAttr("keepdims", 1))
	}
	return e.Op("ReduceMax", "", []*graph.Value{v, e.I64(-1)}, graph.IntAttr("keepdims", 1))
}

// NegInf is the fill of a dropped key.
var NegInf = math.Inf(-1)
