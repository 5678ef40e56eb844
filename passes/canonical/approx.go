package canonical

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/plan"
)

// The approximate plans' forms. They work on the site's tokens in the
// natural layout (…, N, D), whose order is row-major over the grid for both
// channels-last and channels-first exports. Pooling K and V (or Q, K, V)
// there equals pooling the spatial tensor that feeds them whenever their
// projection is linear per token (1×1 convs, Linear), which it is in the
// models this targets; it needs no change to the model's own nodes.

// approx is the plan's form of the site: the window plan's canonical op,
// or one SDPA over pooled tokens (and an upsample back for pool_qkv).
func (b *build) approx(e *emit.Emitter, p *plan.Plan) (*graph.Value, error) {
	s := &b.s
	q, k, v := b.scaledQ(e), b.naturalK(e), b.naturalV(e)
	q5 := q
	q, k, v = b.toRank4(e, q), b.toRank4(e, k), b.toRank4(e, v)
	// The pooled forms are exact ops over fewer tokens: they keep what the
	// site does to its scores (scale, softcap) and drop positions, which
	// pooling changes (a rewrite never plans an approximation of a masked
	// or causal site, passes/plan/plan.go).
	pooledOp := Flash(s, masks.Rows{})
	pooledOp.Causal, pooledOp.SlidingWindow = false, 0
	var out *graph.Value
	switch p.Kind {
	case plan.Window:
		if s.Softcap != 0 {
			return nil, match.Rejectf(match.CodePlan, s.Softmax, "the window plan's attnopt.WindowAttention has no softcap; this site caps its scores at %g (use --pool)", s.Softcap)
		}
		out = EmitWindowed(e, s.ID, q, k, v, opdef.WindowAttentionAttrs{Scale: float32(s.Scale), SpatialShape: p.Grid.Dims, Window: p.Window, Shift: p.Shift})
	case plan.PoolKV:
		k, v = poolTokens(e, k, p.Grid.Dims, p.Stride), poolTokens(e, v, p.Grid.Dims, p.Stride)
		out = EmitSDPA(e, s.ID, q, k, v, nil, pooledOp, false)
	case plan.PoolQKV:
		if e.Opset < 11 {
			return nil, match.Rejectf(match.CodeBuild, s.Softmax, "pool qkv needs Resize with sizes (opset 11 or later), the model has opset %d", e.Opset)
		}
		small := pooled(p.Grid.Dims, p.Stride)
		o := EmitSDPA(e, s.ID, poolTokens(e, q, p.Grid.Dims, p.Stride), poolTokens(e, k, p.Grid.Dims, p.Stride), poolTokens(e, v, p.Grid.Dims, p.Stride), nil, pooledOp, false)
		out = upsampleTokens(e, o, q, small, p.Grid.Dims, p.Upsample)
	default:
		return nil, match.Rejectf(match.CodeBuild, s.Softmax, "unknown plan %q", p.Kind)
	}
	return b.restoreOutput(e, b.fromRank4(e, out, q5)), nil
}

// gridView reshapes tokens (…, N, D) to (X, D, g…), the layout pooling and
// Resize read.
func gridView(e *emit.Emitter, t *graph.Value, grid []int64) *graph.Value {
	target := append([]int64{-1}, grid...)
	d := e.ShapeSlice(t, -1, 1<<62)
	shape := e.Op("Concat", "", []*graph.Value{e.I64(target...), d}, graph.IntAttr("axis", 0))
	x := e.Op("Reshape", "", []*graph.Value{t, shape})
	r := int64(len(grid) + 2)
	perm := []int64{0, r - 1}
	for i := int64(1); i < r-1; i++ {
		perm = append(perm, i)
	}
	return e.Transpose(x, perm...)
}

// tokensOf turns (X, D, g…) back into tokens shaped like like[:-2] ++ [-1, D].
func tokensOf(e *emit.Emitter, x, like *graph.Value) *graph.Value {
	r := int64(x.Type.Rank())
	perm := []int64{0}
	for i := int64(2); i < r; i++ {
		perm = append(perm, i)
	}
	perm = append(perm, 1)
	y := e.Transpose(x, perm...)
	lr := int64(like.Type.Rank())
	lead := e.ShapeSlice(like, 0, lr-2)
	d := e.ShapeSlice(y, -1, 1<<62)
	shape := e.Op("Concat", "", []*graph.Value{lead, e.I64(-1), d}, graph.IntAttr("axis", 0))
	return e.Op("Reshape", "", []*graph.Value{y, shape})
}

// poolTokens averages each stride^d block of grid cells (border blocks over
// the cells they hold).
func poolTokens(e *emit.Emitter, t *graph.Value, grid []int64, stride int64) *graph.Value {
	x := gridView(e, t, grid)
	k := make([]int64, len(grid))
	for i := range k {
		k[i] = stride
	}
	p := e.Op("AveragePool", "", []*graph.Value{x}, graph.IntsAttr("kernel_shape", k), graph.IntsAttr("strides", k),
		graph.IntAttr("ceil_mode", 1), graph.IntAttr("count_include_pad", 0))
	return tokensOf(e, p, t)
}

// upsampleTokens resizes the pooled output back to the full grid.
func upsampleTokens(e *emit.Emitter, o, q *graph.Value, small, grid []int64, mode string) *graph.Value {
	x := gridView(e, o, small)
	lead := e.ShapeSlice(x, 0, 2)
	sizes := e.Op("Concat", "", []*graph.Value{lead, e.I64(grid...)}, graph.IntAttr("axis", 0))
	attrs := []*graph.Attr{graph.StringAttr("mode", mode)}
	if mode == "nearest" {
		attrs = append(attrs, graph.StringAttr("coordinate_transformation_mode", "asymmetric"), graph.StringAttr("nearest_mode", "floor"))
	} else {
		attrs = append(attrs, graph.StringAttr("coordinate_transformation_mode", "half_pixel"))
	}
	roi, scales := (*graph.Value)(nil), (*graph.Value)(nil)
	if e.Opset < 13 {
		// roi and scales are required inputs before opset 13: pass empty ones.
		empty := graph.NewTensor("", graph.Float32, []int64{0}, []byte{})
		roi, scales = e.G.AddInit(e.Prefix+"/empty", empty), e.G.AddInit(e.Prefix+"/empty", graph.NewTensor("", graph.Float32, []int64{0}, []byte{}))
	}
	up := e.Op("Resize", "", []*graph.Value{x, roi, scales, sizes}, attrs...)
	return tokensOf(e, up, q)
}

// pooled divides each grid axis by s, rounding up (border windows averaged
// over the cells they hold), as the planner counts them.
func pooled(grid []int64, s int64) []int64 { return plan.Pooled(grid, s) }
