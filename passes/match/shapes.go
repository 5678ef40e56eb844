package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
)

// siteShapes is what a site's operands say of its dims: B, H, Hkv, Nq, Nk,
// Dqk, Dv, the dtype, and V as the op reads it.
type siteShapes struct {
	rank                                                  int
	batch, heads, kvHeads, qLen, kvLen, headDim, vHeadDim graph.Dim
	dtype                                                 graph.DType
	// kvBroadcast: K or V has fewer axes than Q (Match.KVBroadcast).
	kvBroadcast bool
	// v is V before an fp16 → f32 cast the export put before P·V
	// (matchVType).
	v *graph.Value
}

// readShapes reads B, H, Nq, Nk, Dqk, Dv and the dtype from the operands and
// checks that they, and the mask terms, describe one attention. The
// "shapes" fix-up takes the result (fixups.go).
func readShapes(s *draft) (siteShapes, *Reject) {
	var z siteShapes
	qt, kt, vt := s.Q.Type, s.K.Type, s.V.Type
	if !qt.Ranked || !kt.Ranked || !vt.Ranked {
		for _, v := range []*graph.Value{s.Q, s.K, s.V} {
			if !v.Type.Ranked {
				return z, reject(CodeShape, v, "rank of %q is unknown", v.Name)
			}
		}
	}
	r := len(qt.Shape)
	if r < 2 || r > 5 || len(kt.Shape) < 2 || len(kt.Shape) > r || len(vt.Shape) < 2 || len(vt.Shape) > r {
		return z, reject(CodeShape, s.Q, "Q, K, V have ranks %d, %d, %d; sites are rank 2 to 5, K and V of Q's rank or fewer axes", r, len(kt.Shape), len(vt.Shape))
	}
	sh := siteShapes{rank: r}
	q, k, v := permuted(qt.Shape, s.Perm.Q), padLeading(permuted(kt.Shape, s.Perm.K), r), padLeading(permuted(vt.Shape, s.Perm.V), r)
	if len(kt.Shape) < r || len(vt.Shape) < r || (r == 5 && !sameLead(q, k, v)) {
		if rj := broadcastsOverQ(s, k, v); rj != nil {
			return z, rj
		}
		sh.kvBroadcast = true
	}
	sh.qLen, sh.headDim = q[r-2], q[r-1]
	if s.KTransposed {
		sh.kvLen = k[r-1]
		if !k[r-2].Unknown && !sh.headDim.Unknown && !k[r-2].Equal(sh.headDim) {
			return z, reject(CodeShape, s.K, "Kᵀ %q has %s rows, Q's head dim is %s", s.K.Name, k[r-2], sh.headDim)
		}
	} else {
		sh.kvLen = k[r-2]
	}
	if s.VChannelsFirst {
		sh.vHeadDim = v[r-2]
	} else {
		sh.vHeadDim = v[r-1]
	}
	sh.batch, sh.heads, sh.kvHeads = graph.D(1), graph.D(1), graph.D(1)
	switch r {
	case 5:
		// (B, H, W, N, D), Hiera's windows: the two leading axes fold into
		// the fused op's batch (stage 1's foldLead), the third is its heads.
		sh.batch, sh.heads, sh.kvHeads = q[0].Mul(q[1]), q[2], k[2]
	case 4:
		sh.batch, sh.heads, sh.kvHeads = q[0], q[1], k[1]
	case 3:
		sh.batch = q[0]
		if b, h, ok := unfoldHeads(s.Q); ok && s.Perm.Q == nil {
			sh.batch, sh.heads, sh.kvHeads = b, h, h
		}
	}
	if r >= 4 && sh.kvBroadcast {
		sh.kvHeads = sh.heads
	}
	sh.dtype = qt.DType
	if sh.dtype == graph.Undefined {
		sh.dtype = graph.Float32
	}
	var rj *Reject
	if sh.v, rj = vOfType(s.V, sh.dtype); rj != nil {
		return z, rj
	}
	for _, t := range s.Masks {
		if !t.Value.Type.Ranked {
			return z, reject(CodeMask, t.Value, "rank of mask %q is unknown", t.Value.Name)
		}
		if mr := len(t.Value.Type.Shape); mr > max(4, r) && !(t.BatchView != nil && mr == 5) {
			return z, reject(CodeMask, t.Value, "mask %q has rank %d (more than the site's %d)", t.Value.Name, mr, max(4, r))
		}
		if r == 5 && (t.BatchView != nil || t.BatchFold != nil) {
			return z, reject(CodeMask, t.Value, "mask %q is added in a view of rank-5 scores", t.Value.Name)
		}
		if (t.Kind == masks.Bool || t.Fill != nil) && t.Value.Type.DType != graph.Bool {
			return z, reject(CodeMask, t.Value, "mask condition %q is %s, not bool", t.Value.Name, t.Value.Type.DType)
		}
	}
	return sh, nil
}

// sameLead says K and V have Q's two leading axes, which a rank-5 site
// folds into its batch; otherwise they are expanded like shared keys.
func sameLead(q, k, v []graph.Dim) bool {
	for i := range 2 {
		if !k[i].Equal(q[i]) || !v[i].Equal(q[i]) {
			return false
		}
	}
	return true
}

// permuted is sh in the order Transpose(perm) gives (sh itself for nil).
func permuted(sh []graph.Dim, perm []int64) []graph.Dim {
	if perm == nil || len(perm) != len(sh) {
		return sh
	}
	out := make([]graph.Dim, len(sh))
	for i, p := range perm {
		out[i] = sh[p]
	}
	return out
}

// padLeading right-aligns a shape of fewer axes to rank r with unit axes,
// as MatMul broadcasting reads it.
func padLeading(sh []graph.Dim, r int) []graph.Dim {
	if len(sh) >= r {
		return sh
	}
	out := make([]graph.Dim, 0, r)
	for range r - len(sh) {
		out = append(out, graph.D(1))
	}
	return append(out, sh...)
}

// broadcastsOverQ accepts K and V of fewer axes than Q when each of their
// leading axes (unit-padded) is 1 or Q's: the keys are shared by every
// batch and head, which expanding them to Q's leading dims keeps exact.
// A K/V axis longer than Q's (grouped heads the other way round, or a
// batch Q lacks) would broadcast Q instead, which the fused op cannot.
func broadcastsOverQ(s *draft, k, v []graph.Dim) *Reject {
	q := s.Q.Type.Shape
	for i := range len(q) - 2 {
		for _, x := range []struct {
			v *graph.Value
			d graph.Dim
		}{{s.K, k[i]}, {s.V, v[i]}} {
			if !x.d.Equal(graph.D(1)) && !x.d.Equal(q[i]) {
				return reject(CodeShape, x.v, "%q has fewer axes than Q and axis %d is %s where Q's is %s; only K and V shared over Q's leading axes are fused", x.v.Name, i, x.d, q[i])
			}
		}
	}
	return nil
}

// unfoldHeads recovers (B, H) when a rank-3 Q is a Reshape of a (B, H, N, D)
// tensor: the heads-into-batch fold of `rearrange('b h n d -> (b h) n d')`,
// or of tf2onnx's (B, H, N, 1, D) (unit axes after the first two are left
// out).
func unfoldHeads(q *graph.Value) (b, h graph.Dim, ok bool) {
	p := q.Producer()
	if p == nil || !p.Is("Reshape") {
		return b, h, false
	}
	in := p.Input(0).Type
	if !in.Ranked || len(in.Shape) < 4 {
		return b, h, false
	}
	sh := append(graph.Shape(nil), in.Shape[:2]...)
	for _, d := range in.Shape[2:] {
		if !d.Equal(graph.D(1)) {
			sh = append(sh, d)
		}
	}
	out := q.Type.Shape
	if len(sh) != 4 || !sh[0].Mul(sh[1]).Equal(out[0]) || !sh[2].Equal(out[1]) || !sh[3].Equal(out[2]) {
		return b, h, false
	}
	return sh[0], sh[1], true
}

// vOfType reconciles V's type with Q's (dt): exports of fp16 SDPA compute
// P·V in float32 on Cast(V). The fused op reads the uncast V (no precision
// is lost: it was fp16 to begin with) and its output is cast to the site's
// output type.
func vOfType(v *graph.Value, dt graph.DType) (*graph.Value, *Reject) {
	vt := v.Type.DType
	if vt == dt || vt == graph.Undefined {
		return v, nil
	}
	if p := v.Producer(); p != nil && p.IsFloatCast() && p.Input(0).Type.DType == dt {
		return p.Input(0), nil
	}
	return nil, reject(CodeShape, v, "V %q is %s while Q is %s", v.Name, vt, dt)
}
