package passes

import (
	"fmt"
	"strconv"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/schema"
)

// The canonical attention op. Stage 1 of a rewrite (lift_site.go) turns
// every site, matched or lifted, into one attnopt.internal.SDPA node with
// explicit adapters around it; stage 2 (lower.go) asks the target to lower
// each one. The op lives only between the two stages: Rewrite refuses to
// return a graph that still holds one, so it is never written to a file.
// docs/canonical-op.md states the contract.
//
//	inputs  Q (B, Hq, Nq, Dqk) or (B', Nq, Dqk)   B' = batch with heads folded in
//	        K (B, Hkv, Nk, Dqk) or (B', Nk, Dqk)  Hq a multiple of Hkv
//	        V (B, Hkv, Nk, Dv)  or (B', Nk, Dv)
//	        mask (optional): bool (true = attend) or additive, read broadcast
//	        against (B, Hq, Nq, Nk) ((B', 1, Nq, Nk) at rank 3), never expanded
//	attrs   scale (float), causal (int, bottom-right aligned),
//	        sliding_window (int, with causal: only the last W keys a query
//	        sees, W > 0),
//	        empty_rows, mask_fill, causal_fill, fill_once, fill_round (what
//	        a row that sees no key yields, from the source's fills: rows.go),
//	        zero_rows (int: such rows are zeros by the source's guard),
//	        site (int: the site id)
//	output  (B, Hq, Nq, Dv) or (B', Nq, Dv), in Q's type
//
// Its semantics are attnopt.FlashAttention's, so the pure-Go runtime
// evaluates it with the same kernel (eval/ops_attention.go) and stage 1 can
// be validated before any target is chosen.
const (
	canonicalDomain = "attnopt.internal"
	canonicalOp     = "SDPA"
)

// SDPA is one canonical node as a target reads it.
type SDPA struct {
	Node          *graph.Node
	Q, K, V, Mask *graph.Value
	Scale         float64
	Causal        bool
	Window        int64 // sliding_window: > 0 with Causal
	Rows          Rows
	Site          int
}

// isCanonical reports whether n is the canonical op.
func isCanonical(n *graph.Node) bool { return n.Domain == canonicalDomain && n.OpType == canonicalOp }

// sdpaOf reads a canonical node.
func sdpaOf(n *graph.Node) *SDPA {
	return &SDPA{
		Node: n, Q: n.Input(0), K: n.Input(1), V: n.Input(2), Mask: n.Input(3),
		Scale:  float64(n.AttrFloat("scale", 1)),
		Causal: n.AttrInt("causal", 0) == 1,
		Window: n.AttrInt("sliding_window", 0),
		Rows:   rowsOf(n),
		Site:   int(n.AttrInt("site", -1)),
	}
}

// emitSDPA adds a canonical node over operands already in its layout.
func emitSDPA(e *emit.Emitter, site int, q, k, v, mask *graph.Value, scale float64, causal bool, window int64, rows Rows) *graph.Value {
	ins := []*graph.Value{q, k, v}
	if mask != nil {
		ins = append(ins, mask)
	}
	attrs := []*graph.Attr{graph.FloatAttr("scale", float32(scale)), graph.IntAttr("causal", boolInt(causal))}
	if window > 0 {
		attrs = append(attrs, graph.IntAttr("sliding_window", window))
	}
	attrs = append(attrs, rows.attrs()...)
	if rows.Guarded {
		attrs = append(attrs, graph.IntAttr("zero_rows", 1))
	}
	attrs = append(attrs, graph.IntAttr("site", int64(site)))
	return e.Op(canonicalOp, canonicalDomain, ins, attrs...)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
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

// lengths are Nq and Nk as int64 scalars computed at run time.
func (o *SDPA) lengths(e *emit.Emitter) (nq, nk *graph.Value) {
	r := int64(o.Rank())
	return e.Squeeze(e.ShapeSlice(o.Q, r-2, r-1), 0), e.Squeeze(e.ShapeSlice(o.K, r-2, r-1), 0)
}

// causalAligned reports whether a causal op has provably equal query and
// key lengths, where top-left and bottom-right causal alignment agree.
func (o *SDPA) causalAligned() bool { return !o.Causal || o.QLen().Equal(o.KVLen()) }

// kvGroup is how many query heads share one key/value head (static sizes).
func (o *SDPA) kvGroup() (int64, error) {
	hq, ok1 := o.Heads().Value()
	hkv, ok2 := o.KVHeads().Value()
	if !ok1 || !ok2 || hkv <= 0 || hq%hkv != 0 {
		return 0, fmt.Errorf("%s query heads over %s key/value heads: MultiHeadAttention needs static head counts, one a multiple of the other", o.Heads(), o.KVHeads())
	}
	return hq / hkv, nil
}

// Metadata keys recorded on every fused node (graph.Node.SetMeta): the
// site it replaced and the plan, so validate and report ask the node.
const (
	MetaSite = "attnopt.site"
	MetaPlan = "attnopt.plan"
)

// SiteOf returns the site id a rewrite recorded on a fused node.
func SiteOf(n *graph.Node) (int, bool) {
	v := n.Meta(MetaSite)
	if v == "" {
		return 0, false
	}
	id, err := strconv.Atoi(v)
	return id, err == nil && id >= 0
}

func init() {
	graph.RegisterInfer(canonicalDomain, canonicalOp, schema.InferFlash)
	schema.Register(canonicalDomain+"."+canonicalOp, schema.Flash)
}
