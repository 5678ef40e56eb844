package canonical

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// rowOf is v with its axis a (counted from the right) cut to its first
// index, for a v the matcher proved the same along that axis (a SameRows
// mask term, passes/match/keyrow.go). The construction is re-emitted on one
// row, through the steps the proof walked, so no (Nq, Nk) plane is built;
// where a step cannot be re-emitted (a computed Expand or Reshape target),
// that value is built and sliced.
func rowOf(e *emit.Emitter, v *graph.Value, a int) *graph.Value {
	r := v.Type.Rank()
	if a >= r || v.Type.Shape[r-1-a].Equal(graph.D(1)) {
		return v
	}
	if c := v.Const; c != nil {
		if row, ok := firstAlong(c, r-1-a); ok {
			return e.G.AddInit(e.Prefix+"/same_row", row)
		}
	}
	p := v.Producer()
	switch {
	case p == nil:
	case p.Is("And") && posmask.AllTrue(p.Input(0)):
		return rowOf(e, p.Input(1), a)
	case p.Is("And") && posmask.AllTrue(p.Input(1)):
		return rowOf(e, p.Input(0), a)
	case match.IsElementwise(p):
		ins := make([]*graph.Value, len(p.Inputs))
		for i, x := range p.Inputs {
			if x != nil {
				ins[i] = rowOf(e, x, a)
			}
		}
		return e.Op(p.OpType, p.Domain, ins, p.Attrs...)
	case p.Is("Expand"):
		if target, ok := p.Input(1).Ints(); ok && len(target) > a {
			target = append([]int64(nil), target...)
			target[len(target)-1-a] = 1
			return e.Op("Expand", "", []*graph.Value{rowOf(e, p.Input(0), a), e.I64(target...)})
		}
	case p.Is("Reshape"):
		in := p.Input(0)
		dims, static := v.Type.Shape.Ints()
		if at, ok := graph.UnitViewAxis(in.Type.Shape, v.Type.Shape, r-1-a); ok && static {
			dims = append([]int64(nil), dims...)
			dims[r-1-a] = 1
			return e.Reshape(rowOf(e, in, in.Type.Rank()-1-at), dims...)
		}
	}
	axis := int64(r - 1 - a)
	return e.Op("Slice", "", []*graph.Value{v, e.I64(0), e.I64(1), e.I64(axis)})
}

// firstAlong is index 0 of axis ax of c.
func firstAlong(c *graph.Tensor, ax int) (*graph.Tensor, bool) {
	raw, err := c.Raw()
	size := int64(c.DType.Bits() / 8)
	if err != nil || size == 0 || int64(len(raw)) != c.Numel()*size {
		return nil, false
	}
	inner := size
	for _, d := range c.Dims[ax+1:] {
		inner *= d
	}
	block := inner * c.Dims[ax]
	var out []byte
	for base := int64(0); base < int64(len(raw)); base += block {
		out = append(out, raw[base:base+inner]...)
	}
	dims := append([]int64(nil), c.Dims...)
	dims[ax] = 1
	return graph.NewTensor("", c.DType, dims, out), true
}
