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
//	        passes/match/resolve/rows.go),
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
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/schema"
)

const (
	Domain   = "attnopt.internal"
	Op       = "SDPA"
	WindowOp = "WindowSDPA"
)

// SDPA is one canonical node as a target reads it. Its attributes are the
// table's typed values (internal/opdef/attrs_gen.go): a target reads a
// field, and an attribute the table gains reaches every target here
// without a line of this file.
type SDPA struct {
	Node          *graph.Node
	Q, K, V, Mask *graph.Value
	// Attrs are the exact op's attributes, FlashAttention's.
	Attrs opdef.FlashAttentionAttrs
	// Guarded: rows that see no key are zeros by the source's guard
	// (zero_rows, a canonical attribute only).
	Guarded bool
	Site    int
	// Windowed is set for the window plan's op (WindowSDPA).
	Windowed *opdef.WindowAttentionAttrs
}

// The canonical op's own attributes beside the table's.
const (
	attrSite     = "site"
	attrZeroRows = "zero_rows"
)

// IsCanonical reports whether n is a canonical op.
func IsCanonical(n *graph.Node) bool {
	return n.Domain == Domain && (n.OpType == Op || n.OpType == WindowOp)
}

// Of reads a canonical node through the table's readers, which also check
// every attribute: a node stage 1 wrote that fails them is a bug, named.
func Of(n *graph.Node) (*SDPA, error) {
	o := &SDPA{Node: n, Q: n.Input(0), K: n.Input(1), V: n.Input(2), Mask: n.Input(3),
		Guarded: n.AttrInt(attrZeroRows, 0) == 1, Site: int(n.AttrInt(attrSite, -1))}
	var err error
	if n.OpType == WindowOp {
		var w opdef.WindowAttentionAttrs
		w, err = opdef.ReadWindowAttention(n)
		o.Windowed = &w
		o.Attrs = opdef.NewFlashAttentionAttrs()
		o.Attrs.Scale = w.Scale
	} else {
		o.Attrs, err = opdef.ReadFlashAttention(n)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", n.OpType, n.Label(), err)
	}
	return o, nil
}

// Flash is the exact op's attributes for site s with the given rows that
// see no key: the one place a match's values become the table's, so an
// attribute the table gains is one line here.
func Flash(s *match.Match, rows masks.Rows) opdef.FlashAttentionAttrs {
	a := opdef.NewFlashAttentionAttrs()
	a.Scale, a.Softcap, a.Causal = float32(s.Scale), float32(s.Softcap), s.Causal
	if s.Causal {
		a.SlidingWindow = s.SlidingWindow
	}
	if rows.Literal() {
		a.EmptyRows = int64(rows.Empty)
		a.MaskFill, a.CausalFill = float32(rows.MaskFill), float32(rows.CausalFill)
		a.FillOnce, a.FillRound = rows.Once, rows.Round
		if rows.MaskFloor < 0 {
			a.MaskFloor = float32(rows.MaskFloor)
		}
	}
	return a
}

// EmitSDPA adds a canonical node over operands already in its layout: the
// table's attributes as it writes them, then the canonical ones.
func EmitSDPA(e *emit.Emitter, site int, q, k, v, mask *graph.Value, a opdef.FlashAttentionAttrs, guarded bool) *graph.Value {
	ins := []*graph.Value{q, k, v}
	if mask != nil {
		ins = append(ins, mask)
	}
	attrs := a.Attrs()
	if guarded {
		attrs = append(attrs, graph.IntAttr(attrZeroRows, 1))
	}
	attrs = append(attrs, graph.IntAttr(attrSite, int64(site)))
	return e.Op(Op, Domain, ins, attrs...)
}

// EmitWindowed adds the window plan's canonical node.
func EmitWindowed(e *emit.Emitter, site int, q, k, v *graph.Value, a opdef.WindowAttentionAttrs) *graph.Value {
	return e.Op(WindowOp, Domain, []*graph.Value{q, k, v}, append(a.Attrs(), graph.IntAttr(attrSite, int64(site)))...)
}

// Rows are the op's rows that see no key as the matcher states them
// (passes/match/resolve/rows.go), read back from the table's values.
func (o *SDPA) Rows() masks.Rows {
	a := o.Attrs
	r := masks.Rows{Empty: masks.EmptyRows(a.EmptyRows), MaskFill: float64(a.MaskFill), CausalFill: float64(a.CausalFill),
		Once: a.FillOnce, Round: a.FillRound, Guarded: o.Guarded}
	if f := float64(a.MaskFloor); !math.IsInf(f, -1) && f < 0 {
		r.MaskFloor = f
	}
	return r
}

// Scale is the scale as float64, for the lowerings' arithmetic.
func (o *SDPA) Scale() float64 { return float64(o.Attrs.Scale) }

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
func (o *SDPA) CausalAligned() bool { return !o.Attrs.Causal || o.QLen().Equal(o.KVLen()) }

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
