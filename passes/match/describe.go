package match

import (
	"github.com/attnopt/attnopt/graph"
)

// FusedDesc is what inspect reports about an already-fused attention op:
// its sizes and the memory it holds, so a rewritten model shows its new
// memory per site.
type FusedDesc struct {
	Batch, Heads, QLen, KVLen, HeadDim, VHeadDim graph.Dim
	DType                                        graph.DType
	Window                                       []int64 // WindowAttention
	FusedBytes                                   int64   // -1 when unknown
	// ScoreBytes is the score memory the op's computation corresponds to:
	// B·H·Nq·Nk·e, or B·H·Nq·(window cells)·e for WindowAttention.
	ScoreBytes int64
}

// DescribeFused reads the sizes of an attnopt op from its operands; nil for
// other fused ops, whose layouts vary by attribute.
func DescribeFused(n *graph.Node) *FusedDesc {
	if n.Domain != "attnopt" {
		return nil
	}
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	if q == nil || k == nil || v == nil || !q.Type.Ranked || !k.Type.Ranked || !v.Type.Ranked {
		return nil
	}
	r := q.Type.Rank()
	if r < 3 || k.Type.Rank() != r || v.Type.Rank() != r {
		return nil
	}
	qs, ks, vs := q.Type.Shape, k.Type.Shape, v.Type.Shape
	s := &Match{Batch: qs[0], Heads: graph.D(1), KVHeads: graph.D(1), QLen: qs[r-2], KVLen: ks[r-2],
		HeadDim: qs[r-1], VHeadDim: vs[r-1], DType: q.Type.DType}
	if r == 4 {
		s.Heads, s.KVHeads = qs[1], ks[1]
	}
	d := &FusedDesc{Batch: s.Batch, Heads: s.Heads, QLen: s.QLen, KVLen: s.KVLen, HeadDim: s.HeadDim, VHeadDim: s.VHeadDim, DType: s.DType, FusedBytes: -1, ScoreBytes: -1}
	adds := s // what the op adds is sized as a site of these lengths
	if sb, ok := s.ScoreBytes(); ok {
		d.ScoreBytes = sb
	}
	if n.OpType == "WindowAttention" {
		grid, w := n.AttrInts("spatial_shape"), n.AttrInts("window")
		d.Window = w
		cells := int64(1)
		for i, x := range w {
			if i < len(grid) {
				cells *= min(x, grid[i])
			}
		}
		if sb, ok := prodDims(s.Batch, s.Heads, s.QLen, graph.D(cells), graph.D(int64(s.DType.Bits()/8))); ok {
			d.ScoreBytes = sb
		}
		// Each window attends within itself: what it adds is one window's
		// tiles, as a site of that many tokens.
		win := *s
		win.QLen, win.KVLen = graph.D(cells), graph.D(cells)
		adds = &win
	}
	if fb, ok := adds.FusedBytes(); ok {
		d.FusedBytes = fb
	}
	return d
}
