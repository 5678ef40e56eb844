package canonical

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// shapeReaders lists Shape nodes that read intermediates of the site (GPT-2
// reads w.size(-1) of its scores); the rewrite feeds them the same shape
// computed from Q and K instead.
func shapeReaders(s *match.Match) ([]*graph.Node, *match.Reject) {
	var out []*graph.Node
	inSite := map[*graph.Node]bool{}
	for _, n := range s.Nodes {
		inSite[n] = true
	}
	for _, n := range s.Nodes {
		for _, o := range n.Outputs {
			if o == nil || o == s.Output {
				continue
			}
			for _, u := range o.Uses() {
				if inSite[u.Node] {
					continue
				}
				switch {
				case u.Node.Is("Shape") && (o.Type.Rank() == s.Rank || staticShape(o)):
					out = append(out, u.Node)
				case u.Node.Is("CastLike") && u.Index == 1:
				default:
					return nil, match.Rejectf(match.CodeIntermediate, o, "intermediate %q is read by %s %q", o.Name, u.Node.OpType, u.Node.Label())
				}
			}
		}
	}
	return out, nil
}

// replaceShapeReaders rewires each Shape reader of an intermediate: a
// known shape becomes a constant; the scores' shape is computed as
// shape(Q)[:-1] ++ [Nk].
func replaceShapeReaders(e *emit.Emitter, s *match.Match, readers []*graph.Node) {
	var full *graph.Value
	r := int64(s.Rank)
	for _, n := range readers {
		if in := n.Input(0); staticShape(in) {
			// A view of the scores or probabilities with a known shape
			// (tf2onnx's Keras computes its Reshape targets from them).
			dims, _ := in.Type.Shape.Ints()
			e.G.ReplaceAllUses(n.Output(0), e.I64(shapeSlice(dims, n.AttrInt("start", 0), n.AttrInt("end", int64(len(dims))))...))
			e.G.RemoveNode(n)
			continue
		}
		if full == nil {
			full = scoreShape(e, s)
		}
		v := full
		start, end := n.AttrInt("start", 0), n.AttrInt("end", r)
		if start != 0 || end != r {
			v = e.Op("Slice", "", []*graph.Value{full, e.I64(start), e.I64(end)})
		}
		e.G.ReplaceAllUses(n.Output(0), v)
		e.G.RemoveNode(n)
	}
}

// scoreShape is shape(Q)[:-1] ++ [Nk], in the site's natural layout.
func scoreShape(e *emit.Emitter, s *match.Match) *graph.Value {
	r := int64(s.Rank)
	qs := naturalShape(e, s.Q, s.Perm.Q)
	ks := naturalShape(e, s.K, s.Perm.K)
	lead := e.Op("Slice", "", []*graph.Value{qs, e.I64(0), e.I64(r - 1)})
	// K may have fewer axes than the scores (Match.KVBroadcast).
	kr := int64(s.K.Type.Rank())
	nkAt := kr - 2
	if s.KTransposed {
		nkAt = kr - 1
	}
	nk := e.Op("Slice", "", []*graph.Value{ks, e.I64(nkAt), e.I64(nkAt + 1)})
	return e.Op("Concat", "", []*graph.Value{lead, nk}, graph.IntAttr("axis", 0))
}

// staticShape says every dim of v is known.
func staticShape(v *graph.Value) bool {
	_, ok := v.Type.Shape.Ints()
	return v.Type.Ranked && ok
}

// shapeSlice is Shape's start/end attributes applied to dims (negative
// counts from the end, clamped as the op does).
func shapeSlice(dims []int64, start, end int64) []int64 {
	r := int64(len(dims))
	clamp := func(x int64) int64 {
		if x < 0 {
			x += r
		}
		return min(max(x, 0), r)
	}
	return dims[clamp(start):max(clamp(start), clamp(end))]
}

// naturalShape is Shape(x) in the order Transpose(x, perm) would have.
func naturalShape(e *emit.Emitter, x *graph.Value, perm []int64) *graph.Value {
	sh := e.Op("Shape", "", []*graph.Value{x})
	if perm == nil {
		return sh
	}
	return e.Op("Gather", "", []*graph.Value{sh, e.I64(perm...)}, graph.IntAttr("axis", 0))
}

// rewireTypeOnly points CastLike nodes that borrowed an intermediate's type
// at the site's output, which has the same type.
func rewireTypeOnly(s *match.Match, out *graph.Value) {
	for _, n := range s.Nodes {
		for _, o := range n.Outputs {
			if o == nil || o == s.Output {
				continue
			}
			for _, u := range append([]graph.Use(nil), o.Uses()...) {
				if u.Node.Is("CastLike") && u.Index == 1 && o.Type.DType == out.Type.DType && !feedsSite(u.Node, s) {
					u.Node.SetInput(1, out)
				}
			}
		}
	}
}

// feedsSite reports whether n's output is read by a node of the site (such a
// node dies with the site and must not be rewired to its replacement).
func feedsSite(n *graph.Node, s *match.Match) bool {
	for _, u := range n.Output(0).Uses() {
		for _, m := range s.Nodes {
			if u.Node == m {
				return true
			}
		}
	}
	return false
}

// rewirePresent points the readers of a lifted op's present_key and
// present_value at the full keys and values the replacement computed, or of
// its one stacked present (com.microsoft.Attention's (2, B, H, T, D)) at
// the two stacked. A graph output keeps its name through an Identity when
// the value is not a node's own output.
func (b *build) rewirePresent(e *emit.Emitter) {
	s := &b.s
	if s.Lifted == nil || !s.WantPresent {
		return
	}
	present := b.present[:]
	if s.StackedPresent && b.present[0] != nil && b.present[1] != nil {
		present = []*graph.Value{e.Op("Concat", "", []*graph.Value{e.Unsqueeze(b.present[0], 0), e.Unsqueeze(b.present[1], 0)}, graph.IntAttr("axis", 0))}
	}
	for i, full := range present {
		old := s.Lifted.Output(i + 1)
		if old == nil || full == nil {
			continue
		}
		if isGraphOutput(e.G, old) && (full.Producer() == nil || isGraphOutput(e.G, full)) {
			full = e.Op("Identity", "", []*graph.Value{full})
		}
		e.G.ReplaceAllUses(old, full)
	}
}

func isGraphOutput(g *graph.Graph, v *graph.Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}
