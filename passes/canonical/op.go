// Package canonical is stage 1 of a rewrite: every site, matched or
// lifted, exact or approximate, becomes canonical attention ops with
// explicit adapters around them (stage1.go builds them from a Match;
// approx.go the approximate plans' forms). Stage 2 (passes/lower) asks the
// target to lower each one. The ops live only between the two stages: the
// rewrite refuses to return a graph that still holds one, so they are never
// written to a file. docs/canonical-op.md states the contract.
//
// attnopt.internal.SDPA, the exact op:
//
//	inputs  Q (B, Hq, Nq, Dqk) or (B', Nq, Dqk)   B' = batch with heads folded in
//	        K (B, Hkv, Nk, Dqk) or (B', Nk, Dqk)  Hq a multiple of Hkv
//	        V (B, Hkv, Nk, Dv)  or (B', Nk, Dv)
//	        mask (optional): bool (true = attend) or additive, read broadcast
//	        against (B, Hq, Nq, Nk) ((B', 1, Nq, Nk) at rank 3), never expanded
//	attrs   scale (float), causal (int, bottom-right aligned),
//	        softcap (float c > 0: the scaled scores become c·tanh(s/c)
//	        before the mask; absent = 0, none),
//	        sliding_window (int, with causal: only the last W keys a query
//	        sees, W > 0),
//	        empty_rows, mask_fill, causal_fill, fill_once, fill_round (what
//	        a row that sees no key yields, from the source's fills:
//	        passes/match/rows.go),
//	        zero_rows (int: such rows are zeros by the source's guard),
//	        site (int: the site id)
//	output  (B, Hq, Nq, Dv) or (B', Nq, Dv), in Q's type
//
// Its semantics are attnopt.FlashAttention's, so the pure-Go runtime
// evaluates it with the same kernel (eval/ops_attention.go) and stage 1 can
// be validated before any target is chosen.
//
// attnopt.internal.WindowSDPA, the window plan's op: Q, K, V as above (no
// mask), attributes spatial_shape, window, shift, scale and site, with
// attnopt.WindowAttention's semantics (tokens attend within their Swin
// window of the grid).
package canonical

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/schema"
)

const (
	Domain   = "attnopt.internal"
	Op       = "SDPA"
	WindowOp = "WindowSDPA"
)

// SDPA is one canonical node as a target reads it.
type SDPA struct {
	Node          *graph.Node
	Q, K, V, Mask *graph.Value
	Scale         float64
	Softcap       float64 // > 0: c·tanh(s/c) on the scaled scores, before the mask
	Causal        bool
	Window        int64 // sliding_window: > 0 with Causal
	Rows          match.Rows
	Site          int
	// Spatial is set for the window plan's op (WindowSDPA).
	Spatial *Spatial
}

// Spatial is the window plan's geometry: the token grid, the window per
// axis and its cyclic shift.
type Spatial struct {
	Grid, Window, Shift []int64
}

// IsCanonical reports whether n is a canonical op.
func IsCanonical(n *graph.Node) bool {
	return n.Domain == Domain && (n.OpType == Op || n.OpType == WindowOp)
}

// Of reads a canonical node.
func Of(n *graph.Node) *SDPA {
	o := &SDPA{
		Node: n, Q: n.Input(0), K: n.Input(1), V: n.Input(2), Mask: n.Input(3),
		Scale:   float64(n.AttrFloat(opdef.AttrScale, 1)),
		Softcap: float64(n.AttrFloat(opdef.AttrSoftcap, 0)),
		Causal:  n.AttrInt(opdef.AttrCausal, 0) == 1,
		Window:  n.AttrInt(opdef.AttrSlidingWindow, 0),
		Rows:    RowsOf(n),
		Site:    int(n.AttrInt("site", -1)),
	}
	if n.OpType == WindowOp {
		o.Spatial = &Spatial{Grid: n.AttrInts(opdef.AttrSpatialShape), Window: n.AttrInts(opdef.AttrWindow), Shift: n.AttrInts(opdef.AttrShift)}
	}
	return o
}

// EmitSDPA adds a canonical node over operands already in its layout.
func EmitSDPA(e *emit.Emitter, site int, q, k, v, mask *graph.Value, scale, softcap float64, causal bool, window int64, rows match.Rows) *graph.Value {
	ins := []*graph.Value{q, k, v}
	if mask != nil {
		ins = append(ins, mask)
	}
	attrs := []*graph.Attr{graph.FloatAttr(opdef.AttrScale, float32(scale)), graph.IntAttr(opdef.AttrCausal, boolInt(causal))}
	attrs = append(attrs, SoftcapAttrs(softcap)...)
	if window > 0 {
		attrs = append(attrs, graph.IntAttr(opdef.AttrSlidingWindow, window))
	}
	attrs = append(attrs, rowsAttrs(rows)...)
	if rows.Guarded {
		attrs = append(attrs, graph.IntAttr("zero_rows", 1))
	}
	attrs = append(attrs, graph.IntAttr("site", int64(site)))
	return e.Op(Op, Domain, ins, attrs...)
}

// EmitWindowed adds the window plan's canonical node.
func EmitWindowed(e *emit.Emitter, site int, q, k, v *graph.Value, scale float64, sp Spatial) *graph.Value {
	return e.Op(WindowOp, Domain, []*graph.Value{q, k, v},
		graph.IntsAttr(opdef.AttrSpatialShape, sp.Grid), graph.IntsAttr(opdef.AttrWindow, sp.Window),
		graph.IntsAttr(opdef.AttrShift, sp.Shift), graph.FloatAttr(opdef.AttrScale, float32(scale)), graph.IntAttr("site", int64(site)))
}

// SoftcapAttrs is the softcap attribute as the canonical op and
// FlashAttention spell it: absent when 0.
func SoftcapAttrs(c float64) []*graph.Attr {
	if c == 0 {
		return nil
	}
	return []*graph.Attr{graph.FloatAttr(opdef.AttrSoftcap, float32(c))}
}

// boolInt is 1 for true.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rowsAttrs are the non-default row attributes, as the canonical op and
// FlashAttention spell them.
func rowsAttrs(r match.Rows) []*graph.Attr {
	if !r.Literal() {
		return nil
	}
	as := []*graph.Attr{graph.IntAttr(opdef.AttrEmptyRows, int64(r.Empty))}
	if !math.IsInf(r.MaskFill, -1) {
		as = append(as, graph.FloatAttr(opdef.AttrMaskFill, float32(r.MaskFill)))
	}
	if !math.IsInf(r.CausalFill, -1) {
		as = append(as, graph.FloatAttr(opdef.AttrCausalFill, float32(r.CausalFill)))
	}
	if r.Once {
		as = append(as, graph.IntAttr(opdef.AttrFillOnce, 1))
	}
	if r.Round {
		as = append(as, graph.IntAttr(opdef.AttrFillRound, 1))
	}
	if r.MaskFloor < 0 {
		as = append(as, graph.FloatAttr(opdef.AttrMaskFloor, float32(r.MaskFloor)))
	}
	return as
}

// floorOf is mask_floor as Rows.MaskFloor states it: 0 for none (−inf).
func floorOf(f float32) float64 {
	if math.IsInf(float64(f), -1) || f >= 0 {
		return 0
	}
	return float64(f)
}

// RowsOf reads the row attributes of a canonical op or FlashAttention.
func RowsOf(n *graph.Node) match.Rows {
	neg := float32(math.Inf(-1))
	return match.Rows{
		Empty:      match.EmptyRows(n.AttrInt(opdef.AttrEmptyRows, 0)),
		MaskFill:   float64(n.AttrFloat(opdef.AttrMaskFill, neg)),
		CausalFill: float64(n.AttrFloat(opdef.AttrCausalFill, neg)),
		Once:       n.AttrInt(opdef.AttrFillOnce, 0) == 1,
		Round:      n.AttrInt(opdef.AttrFillRound, 0) == 1,
		MaskFloor:  floorOf(n.AttrFloat(opdef.AttrMaskFloor, neg)),
		Guarded:    n.AttrInt("zero_rows", 0) == 1,
	}
}

// Rank is 4 with heads, 3 with heads folded into the batch.
func (o *SDPA) Rank() int { return o.Q.Type.Rank() }

// DType is Q's element type, the op's and its output's.
func (o *SDPA) DType() graph.DType { return o.Q.Type.DType }

func (o *SDPA) dim(v *graph.Value, fromEnd int) graph.Dim {
	sh := v.Type.Shape
	if len(sh) < fromEnd {
		return graph.Dim{Unknown: true}
	}
	return sh[len(sh)-fromEnd]
}

// QLen and KVLen are Nq and Nk.
func (o *SDPA) QLen() graph.Dim  { return o.dim(o.Q, 2) }
func (o *SDPA) KVLen() graph.Dim { return o.dim(o.K, 2) }

// HeadDim and VHeadDim are Dqk and Dv.
func (o *SDPA) HeadDim() graph.Dim  { return o.dim(o.Q, 1) }
func (o *SDPA) VHeadDim() graph.Dim { return o.dim(o.V, 1) }

// Heads and KVHeads are Hq and Hkv (1 at rank 3).
func (o *SDPA) Heads() graph.Dim   { return o.headsOf(o.Q) }
func (o *SDPA) KVHeads() graph.Dim { return o.headsOf(o.K) }

func (o *SDPA) headsOf(v *graph.Value) graph.Dim {
	if o.Rank() != 4 {
		return graph.D(1)
	}
	return o.dim(v, 3)
}

// Lengths are Nq and Nk as int64 scalars computed at run time.
func (o *SDPA) Lengths(e *emit.Emitter) (nq, nk *graph.Value) {
	r := int64(o.Rank())
	return e.Squeeze(e.ShapeSlice(o.Q, r-2, r-1), 0), e.Squeeze(e.ShapeSlice(o.K, r-2, r-1), 0)
}

// CausalAligned reports whether a causal op has provably equal query and
// key lengths, where top-left and bottom-right causal alignment agree.
func (o *SDPA) CausalAligned() bool { return !o.Causal || o.QLen().Equal(o.KVLen()) }

// KVGroup is how many query heads share one key/value head (static sizes).
func (o *SDPA) KVGroup() (int64, error) {
	hq, ok1 := o.Heads().Value()
	hkv, ok2 := o.KVHeads().Value()
	if !ok1 || !ok2 || hkv <= 0 || hq%hkv != 0 {
		return 0, fmt.Errorf("%s query heads over %s key/value heads: MultiHeadAttention needs static head counts, one a multiple of the other", o.Heads(), o.KVHeads())
	}
	return hq / hkv, nil
}

func init() {
	graph.RegisterInfer(Domain, Op, schema.InferFlash)
	graph.RegisterInfer(Domain, WindowOp, schema.InferFlash)
	schema.Register(Domain+"."+Op, schema.Flash)
	schema.Register(Domain+"."+WindowOp, schema.Flash)
}
