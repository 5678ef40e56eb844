package match

import (
	"github.com/attnopt/attnopt/graph"
)

// Grouped-query attention. Decoders with fewer key/value heads than query
// heads repeat K and V before the score product (transformers' repeat_kv:
// (B, Hkv, N, D) → Unsqueeze(2) → Expand(B, Hkv, r, N, D) → Reshape(B, Hkv·r,
// N, D); multi-query models expand one head), so query head h reads kv head
// h / r, which is exactly FlashAttention's grouping (repeatRules lists the
// forms). The matcher looks through the repeat, and the op
// reads K and V at Hkv heads. Exporters may view the repeated tensor through
// Reshapes that regroup the leading (batch, head) dims and Transposes of the
// last two axes on its way to the product; both keep that order.

// kvRepeat is a repeated K or V traced back to its source.
type kvRepeat struct {
	base *graph.Value // (B, Hkv, N, D)
	rep  int64
	swap bool // the site's operand is the source with its last two axes swapped
}

// repeatRule is one way exporters write the head repeat: given the tensor
// a site reads, its (B, Hkv, N, D) source and the repeat factor.
type repeatRule func(x *graph.Value) (base *graph.Value, rep int64, ok bool)

var repeatRules = []repeatRule{
	// Gather(base, [0,…,0, 1,…,1, …], axis=1)
	func(x *graph.Value) (*graph.Value, int64, bool) {
		if p := x.Producer(); p != nil && p.Is("Gather") {
			return gatherRepeat(p)
		}
		return nil, 0, false
	},
	// repeat_kv: Reshape(Expand or Tile(Unsqueeze(base, 2)), (B, Hkv·r, N, D))
	func(x *graph.Value) (*graph.Value, int64, bool) {
		in, r := viewStep(x)
		if r == nil || !r.reshape {
			return nil, 0, false
		}
		return headRepeat(in)
	},
	// multi-query: one key/value head broadcast to all, Expand or Tile of
	// (B, 1, N, D) to (B, H, N, D) (for Hkv > 1 Tile would be the wrong
	// order, head h reading h mod Hkv)
	oneHeadRepeat,
}

// unrepeat traces v (rank 4, (B, H, …)) back through leading-dim Reshapes,
// last-two-axis Transposes and widening Casts to a head repeat.
func unrepeat(v *graph.Value) (kvRepeat, bool) {
	if v.Type.Rank() != 4 {
		return kvRepeat{}, false
	}
	swap := false
	x := v
	for i := 0; i < 6; i++ {
		for _, rule := range repeatRules {
			if base, rep, ok := rule(x); ok {
				return kvRepeat{base, rep, swap}, heads(v, base, rep)
			}
		}
		in, r := viewStep(x)
		if r == nil {
			return kvRepeat{}, false
		}
		swap = swap != r.swap
		x = in
	}
	return kvRepeat{}, false
}

// oneHeadRepeat recognises Expand(base, (B, H, N, D)) or Tile(base, (1, H,
// 1, 1)) of a base with one head.
func oneHeadRepeat(x *graph.Value) (*graph.Value, int64, bool) {
	p := x.Producer()
	if p == nil || !(p.Is("Expand") || p.Is("Tile")) || x.Type.Rank() != 4 {
		return nil, 0, false
	}
	base := p.Input(0)
	bs, xs := base.Type.Shape, x.Type.Shape
	if base.Type.Rank() != 4 || !bs[1].Equal(graph.D(1)) {
		return nil, 0, false
	}
	if p.Is("Tile") {
		reps, ok := p.Input(1).Ints()
		if !ok || len(reps) != 4 || reps[0] != 1 || reps[2] != 1 || reps[3] != 1 {
			return nil, 0, false
		}
	}
	rep, ok := xs[1].Value()
	if !ok || rep < 2 {
		return nil, 0, false
	}
	// Only the head axis grows.
	for _, j := range []int{0, 2, 3} {
		if !xs[j].Equal(bs[j]) {
			return nil, 0, false
		}
	}
	return base, rep, true
}

// heads checks that v's leading dims are (B, Hkv·r) for base (B, Hkv, …).
func heads(v, base *graph.Value, rep int64) bool {
	vs, bs := v.Type.Shape, base.Type.Shape
	return len(bs) == 4 && vs[0].Equal(bs[0]) && vs[1].Equal(bs[1].Mul(graph.D(rep)))
}

// sameLastTwo reports whether a Reshape from a to b keeps the last two dims.
func sameLastTwo(a, b *graph.Value) bool {
	at, bt := a.Type, b.Type
	if !at.Ranked || !bt.Ranked || len(at.Shape) < 3 || len(bt.Shape) < 3 {
		return false
	}
	ra, rb := len(at.Shape), len(bt.Shape)
	return at.Shape[ra-1].Equal(bt.Shape[rb-1]) && at.Shape[ra-2].Equal(bt.Shape[rb-2])
}

// headRepeat recognises x = Expand(Unsqueeze(base, 2), (B, Hkv, r, N, D)) or
// Tile(Unsqueeze(base, 2), (1, 1, r, 1, 1)).
func headRepeat(x *graph.Value) (*graph.Value, int64, bool) {
	p := x.Producer()
	xt := x.Type
	if p == nil || !(p.Is("Expand") || p.Is("Tile")) || !xt.Ranked || len(xt.Shape) != 5 {
		return nil, 0, false
	}
	u := p.Input(0).Producer()
	if u == nil || !u.Is("Unsqueeze") {
		return nil, 0, false
	}
	axes := u.AttrInts("axes")
	if in := u.Input(1); in != nil {
		var ok bool
		if axes, ok = in.Ints(); !ok {
			return nil, 0, false
		}
	}
	if len(axes) != 1 || (axes[0] != 2 && axes[0] != -3) {
		return nil, 0, false
	}
	base := u.Input(0)
	bt := base.Type
	if !bt.Ranked || len(bt.Shape) != 4 {
		return nil, 0, false
	}
	if p.Is("Tile") {
		reps, ok := p.Input(1).Ints()
		if !ok || len(reps) != 5 || reps[0] != 1 || reps[1] != 1 || reps[3] != 1 || reps[4] != 1 {
			return nil, 0, false
		}
	}
	rep, ok := xt.Shape[2].Value()
	if !ok || rep < 1 {
		return nil, 0, false
	}
	// The expand must only fill the inserted axis.
	for i, j := range []int{0, 1, 3, 4} {
		if !xt.Shape[j].Equal(bt.Shape[i]) {
			return nil, 0, false
		}
	}
	return base, rep, true
}

// gatherRepeat recognises Gather(base, [0,…,0, 1,…,1, …], axis=1) with every
// head index repeated r times in a row.
func gatherRepeat(p *graph.Node) (*graph.Value, int64, bool) {
	base := p.Input(0)
	idx, ok := p.Input(1).Ints()
	if !ok || p.AttrInt("axis", 0) != 1 || base.Type.Rank() != 4 || p.Input(1).Type.Rank() != 1 {
		return nil, 0, false
	}
	hkv, ok := base.Type.Shape[1].Value()
	if !ok || hkv == 0 || int64(len(idx))%hkv != 0 {
		return nil, 0, false
	}
	rep := int64(len(idx)) / hkv
	for h, i := range idx {
		if i != int64(h)/rep {
			return nil, 0, false
		}
	}
	return base, rep, true
}

// unrepeatedKV is the sources of K's and V's head repeat when both repeat
// the same way (K then reads in its natural layout); nil otherwise. The
// "unrepeat-kv" fix-up takes them (fixups.go).
func unrepeatedKV(s *draft) *kvSources {
	if s.VChannelsFirst || s.Perm.Any() || s.Q.Type.Rank() != 4 {
		return nil
	}
	k, okK := unrepeat(s.K)
	v, okV := unrepeat(s.V)
	// K must end as the site reads it: swapped for Kᵀ, natural otherwise.
	if !okK || !okV || k.rep != v.rep || k.rep < 2 || v.swap || k.swap != s.KTransposed {
		return nil
	}
	return &kvSources{k: k.base, v: v.base}
}

// kvSources are K (natural) and V before the graph repeats them to every
// query head.
type kvSources struct{ k, v *graph.Value }

// unviewedK looks through the views dynamo writes around Kᵀ
// (Reshape(Transpose(Reshape(K, (B·H, N, D)), (0, 2, 1)), (B, H, D, N))): the
// farthest rank-4 tensor with K's batch and head dims that only
// leading-dim Reshapes and last-two-axis Transposes separate from it, when
// it is K in its natural layout. The op then reads K itself and the views
// die, instead of being undone by more layout ops. nil when there is none;
// the "unview-k" fix-up takes it (fixups.go).
func unviewedK(s *draft) *graph.Value {
	if s.Repeated != nil || s.Perm.Any() || s.Q.Type.Rank() != 4 || !s.KTransposed || s.K.Type.Rank() != 4 {
		return nil
	}
	var best *graph.Value
	swap, reshaped := false, false
	x := s.K
	for i := 0; i < 6; i++ {
		in, r := viewStep(x)
		if r == nil || r.cast {
			break // before a cast, K has another type than the site's
		}
		swap, reshaped, x = swap != r.swap, reshaped || r.reshape, in
		xs, ks := x.Type.Shape, s.K.Type.Shape
		if reshaped && swap && x.Type.Rank() == 4 && xs[0].Equal(ks[0]) && xs[1].Equal(ks[1]) {
			best = x
		}
	}
	return best
}
