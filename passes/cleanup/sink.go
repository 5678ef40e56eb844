package cleanup

import (
	"slices"

	"github.com/attnopt/attnopt/graph"
)

// Transpose sinking. Exporters unbind a packed QKV projection into Q, K and
// V with Split+Squeeze or Gather after one Transpose, and a target that
// reads (B, S, H·D) (MultiHeadAttention) then transposes each part back.
// These rules move such per-part Transposes above the unbind, where they
// meet the model's own Transpose and fold with it (foldTransposePair). They
// fire only when every part is transposed alike, so the data transposed
// never grows.

// keepAxes is the permutation of a rank-(len(rest)+k) tensor that applies
// perm to the axes listed in rest and keeps the others in place: a
// Transpose by it commutes with dropping the kept axes.
func keepAxes(perm []int64, rest []int64, rank int) []int64 {
	out := make([]int64, rank)
	for i := range out {
		out[i] = int64(i)
	}
	for i, p := range perm {
		out[rest[i]] = rest[p]
	}
	return out
}

// others lists 0…rank-1 without the given axes.
func others(rank int, axes ...int64) []int64 {
	var rest []int64
	for i := int64(0); i < int64(rank); i++ {
		if !slices.Contains(axes, i) {
			rest = append(rest, i)
		}
	}
	return rest
}

// soleTranspose returns the Transpose that is v's only reader, if any.
func soleTranspose(g *graph.Graph, v *graph.Value) *graph.Node {
	if v == nil || isGraphOutput(g, v) || len(v.Uses()) != 1 {
		return nil
	}
	u := v.Uses()[0]
	if u.Index != 0 || !u.Node.Is("Transpose") || isGraphOutput(g, u.Node.Output(0)) {
		return nil
	}
	return u.Node
}

// addTranspose adds Transpose(x, perm) next to n's name.
func addTranspose(g *graph.Graph, near *graph.Node, x *graph.Value, perm []int64) *graph.Value {
	out := g.NewValue(near.Name+"_sunk", graph.Type{})
	t := g.AddNode("Transpose", "", near.Name+"_sunk", []*graph.Value{x}, []*graph.Value{out}, graph.IntsAttr("perm", perm))
	graph.InferNode(g, t)
	return out
}

// sinkTransposeThroughSqueeze: Transpose(Squeeze(x, a), p) →
// Squeeze(Transpose(x, p'), a), p' permuting the axes Squeeze keeps.
func sinkTransposeThroughSqueeze(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Squeeze") || n.Input(0) == nil {
		return false
	}
	t := soleTranspose(g, n.Output(0))
	r := n.Input(0).Type.Rank()
	axes, ok := axesOf(n, r)
	if t == nil || !ok {
		return false
	}
	perm := permOf(t)
	if len(perm) != r-len(axes) {
		return false
	}
	moved := addTranspose(g, t, n.Input(0), keepAxes(perm, others(r, axes...), r))
	ins := append([]*graph.Value{moved}, n.Inputs[1:]...)
	out := g.NewValue(n.Name+"_sunk_out", graph.Type{})
	sq := g.AddNode("Squeeze", "", n.Name+"_sunk", ins, []*graph.Value{out}, n.Attrs...)
	graph.InferNode(g, sq)
	g.ReplaceAllUses(t.Output(0), out)
	return true
}

// hoistTransposeAboveParts: when every output of a Split, or every reader
// of x being a Gather of one scalar index on one axis, is read only by a
// Transpose of one permutation, transpose x once and split or gather that.
func hoistTransposeAboveParts(g *graph.Graph, n *graph.Node) bool {
	var parts []*graph.Value
	var x *graph.Value
	var axis int64
	switch {
	case n.Is("Split"):
		x, parts = n.Input(0), n.Outputs
		axis = n.AttrInt("axis", 0)
	case n.Is("Gather") || n.Is("Slice"):
		x, axis = n.Input(0), partAxis(n)
		if x == nil {
			return false
		}
		for _, u := range x.Uses() {
			m := u.Node
			if u.Index != 0 || m.OpType != n.OpType || m.Domain != n.Domain || partAxis(m) != axis || axis == noAxis {
				return false
			}
			parts = append(parts, m.Output(0))
		}
		// Only the first Gather of x acts, for all of them.
		if x.Uses()[0].Node != n {
			return false
		}
	default:
		return false
	}
	if x == nil {
		return false
	}
	r := x.Type.Rank()
	if r < 0 || len(parts) == 0 {
		return false
	}
	if axis < 0 {
		axis += int64(r)
	}
	var perm []int64
	var ts []*graph.Node
	for _, p := range parts {
		t := soleTranspose(g, p)
		if t == nil || (perm != nil && !slices.Equal(permOf(t), perm)) {
			return false
		}
		perm = permOf(t)
		ts = append(ts, t)
	}
	var full []int64
	if !n.Is("Gather") {
		if len(perm) != r {
			return false
		}
		full = perm
	} else {
		if len(perm) != r-1 {
			return false
		}
		full = keepAxes(perm, others(r, axis), r)
	}
	moved := addTranspose(g, n, x, full)
	newAxis := int64(slices.Index(full, axis))
	if n.Is("Split") {
		outs := make([]*graph.Value, len(parts))
		for k := range outs {
			outs[k] = g.NewValue(n.Name+"_sunk_out", graph.Type{})
		}
		m := g.AddNode("Split", "", n.Name+"_sunk", append([]*graph.Value{moved}, n.Inputs[1:]...), outs, withAxis(n.Attrs, newAxis)...)
		graph.InferNode(g, m)
		for k, t := range ts {
			g.ReplaceAllUses(t.Output(0), outs[k])
		}
		return true
	}
	for i, t := range ts {
		part := parts[i].Producer()
		ins := append([]*graph.Value{moved}, part.Inputs[1:]...)
		attrs := withAxis(part.Attrs, newAxis)
		if part.Is("Slice") {
			ins[3] = g.AddInit(part.Name+"_sunk_axes", graph.NewInt64Tensor("", []int64{1}, []int64{newAxis}))
			attrs = part.Attrs
		}
		out := g.NewValue(part.Name+"_sunk_out", graph.Type{})
		m := g.AddNode(part.OpType, "", part.Name+"_sunk", ins, []*graph.Value{out}, attrs...)
		graph.InferNode(g, m)
		g.ReplaceAllUses(t.Output(0), out)
	}
	return true
}

const noAxis = -1 << 62

// partAxis is the one axis a Gather of a scalar index, or a Slice (opset
// 10+) of constant axes naming one axis, takes a part along; noAxis when
// the node is neither.
func partAxis(n *graph.Node) int64 {
	switch {
	case n.Is("Gather") && n.Input(1) != nil && n.Input(1).Type.Rank() == 0:
		return n.AttrInt("axis", 0)
	case n.Is("Slice") && len(n.Inputs) >= 4 && n.Input(3) != nil:
		if axes, ok := n.Input(3).Ints(); ok && len(axes) == 1 {
			return axes[0]
		}
	}
	return noAxis
}

// withAxis is attrs with axis set to a.
func withAxis(attrs []*graph.Attr, a int64) []*graph.Attr {
	var out []*graph.Attr
	for _, x := range attrs {
		if x.Name != "axis" {
			out = append(out, x)
		}
	}
	return append(out, graph.IntAttr("axis", a))
}

// mergeSameTranspose: two Transposes of one value by one permutation are
// one.
func mergeSameTranspose(g *graph.Graph, n *graph.Node) bool {
	if !n.Is("Transpose") || n.Input(0) == nil || isGraphOutput(g, n.Output(0)) {
		return false
	}
	for _, u := range n.Input(0).Uses() {
		m := u.Node
		if m != n && m.Is("Transpose") && u.Index == 0 && slices.Equal(permOf(m), permOf(n)) && inGraph(g, m) {
			g.ReplaceAllUses(n.Output(0), m.Output(0))
			g.RemoveNode(n)
			return true
		}
	}
	return false
}
