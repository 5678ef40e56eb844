package canonical

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/plan"
	"github.com/attnopt/attnopt/passes/schema"
)

// Stage 1 for one site. The site's operands go through adapters into the
// canonical layout (Kᵀ forms, SAGAN's V·Aᵀ, rank 2, packed heads, per-head
// Q scales, KV caches, mask terms combined into one) and a canonical op
// computes the attention (one SDPA for an exact site, the plan's ops for an
// approximate one, approx.go); the result goes back to the site's output
// layout. Cleanup cancels the adapters against the model's own layout ops
// and the lowering's. The Match is never written: a build works on its own
// copy, whose operands a lifted op's prelude may emit (packed.go).

// Replacement is what stage 1 built for one site; Apply puts it in the
// site's place.
type Replacement struct {
	Out *graph.Value
	b   *build
}

// build is one site's stage 1: its bindings with the operands emitted, and
// the full keys and values for a lifted op's present outputs.
type build struct {
	s       match.Match
	present [2]*graph.Value
	readers []*graph.Node
}

// Check says why stage 1 cannot build s, before anything is emitted: a
// scale no fused op takes, or intermediates other nodes read.
func Check(s *match.Match) *match.Reject {
	if why := schema.ScaleProblem(s.Scale); why != "" {
		return match.Rejectf(match.CodeScale, s.Softmax, "%s", why)
	}
	_, rj := shapeReaders(s)
	return rj
}

// Build emits the canonical op(s) for s, which Check accepted, under plan
// p; zeroEmptyRows is a test hook that gives rows seeing no key zeros, as
// before the canonical op stated the source's fills.
func Build(e *emit.Emitter, s *match.Match, p *plan.Plan, zeroEmptyRows bool) (*Replacement, error) {
	readers, rj := shapeReaders(s)
	if rj != nil {
		return nil, rj
	}
	b := &build{s: *s, readers: readers}
	b.prelude(e)
	var out *graph.Value
	var err error
	if p != nil && p.Approximate() {
		out, err = b.approx(e, p)
	} else {
		out, err = b.exact(e, zeroEmptyRows)
	}
	if err != nil {
		return nil, err
	}
	return &Replacement{Out: out, b: b}, nil
}

// exact is one attnopt.internal.SDPA over the site.
func (b *build) exact(e *emit.Emitter, zeroEmpty bool) (*graph.Value, error) {
	s := &b.s
	q, k, v := b.scaledQ(e), b.naturalK(e), b.naturalV(e)
	q5 := q
	q, k, v = b.toRank4(e, q), b.toRank4(e, k), b.toRank4(e, v)
	mask, err := maskInput(e, s, scoreDType(s))
	if err != nil {
		return nil, err
	}
	mask = liftMaskRank(e, s, mask)
	if s.Rank == 5 && mask != nil {
		mask = foldMask(e, mask, q5)
	}
	rows := s.Rows
	if zeroEmpty {
		rows = masks.Rows{}
	}
	out := EmitSDPA(e, s.ID, q, k, v, mask, Flash(s, rows), rows.Guarded)
	return b.restoreOutput(e, b.fromRank4(e, out, q5)), nil
}

// toRank4 brings an operand of the site to the canonical op's frame: a
// rank-2 site gains a unit batch, a rank-5 one (B, H, W, N, D) folds its two
// leading axes into the batch (foldLead); ranks 3 and 4 are the op's own.
func (b *build) toRank4(e *emit.Emitter, x *graph.Value) *graph.Value {
	switch b.s.Rank {
	case 2:
		return e.Unsqueeze(x, 0)
	case 5:
		return foldLead(e, x)
	}
	return x
}

// fromRank4 undoes toRank4 on the op's output; q5 is the site's Q, whose
// leading dims the output of a rank-5 site takes back.
func (b *build) fromRank4(e *emit.Emitter, out, q5 *graph.Value) *graph.Value {
	switch b.s.Rank {
	case 2:
		return e.Squeeze(out, 0)
	case 5:
		dims := append(append([]graph.Dim{}, q5.Type.Shape[:3]...), out.Type.Shape[2:]...)
		if static, ok := staticDims(dims); ok {
			return e.Reshape(out, static...)
		}
		shape := e.Op("Concat", "", []*graph.Value{e.ShapeSlice(q5, 0, 3), e.ShapeSlice(out, 2, 4)}, graph.IntAttr("axis", 0))
		return e.Op("Reshape", "", []*graph.Value{out, shape})
	}
	return out
}

// foldLead reshapes (A, B, W, N, D) to (A·B, W, N, D): the leading axes of
// a rank-5 site are batch axes (Hiera's heads and windows), which the fused
// op reads as one.
func foldLead(e *emit.Emitter, x *graph.Value) *graph.Value {
	if static, ok := staticDims(x.Type.Shape[2:]); ok {
		return e.Reshape(x, append([]int64{-1}, static...)...)
	}
	shape := e.Op("Concat", "", []*graph.Value{e.I64(-1), e.ShapeSlice(x, 2, 5)}, graph.IntAttr("axis", 0))
	return e.Op("Reshape", "", []*graph.Value{x, shape})
}

// foldMask brings a rank-5 site's mask (of rank 5 or fewer, broadcasting
// against the (A, B, W, Nq, Nk) scores) to the folded frame. A mask that
// spans both leading axes or neither folds as it is; one that broadcasts
// over only one of them is expanded over Q's first, so folding keeps which
// rows each element reaches.
func foldMask(e *emit.Emitter, m, q5 *graph.Value) *graph.Value {
	if r := m.Type.Rank(); r < 5 {
		axes := make([]int64, 5-r)
		for i := range axes {
			axes[i] = int64(i)
		}
		m = e.Unsqueeze(m, axes...)
	}
	ms, qs := m.Type.Shape, q5.Type.Shape
	one := graph.D(1)
	switch {
	case ms[0].Equal(one) && ms[1].Equal(one):
		return e.Squeeze(m, 0)
	case ms[0].Equal(qs[0]) && ms[1].Equal(qs[1]):
		return foldLead(e, m)
	}
	var target *graph.Value
	if static, ok := staticDims(append(append([]graph.Dim{}, qs[:2]...), ms[2:]...)); ok {
		target = e.I64(static...)
	} else {
		target = e.Op("Concat", "", []*graph.Value{e.ShapeSlice(q5, 0, 2), e.ShapeSlice(m, 2, 5)}, graph.IntAttr("axis", 0))
	}
	return foldLead(e, e.Op("Expand", "", []*graph.Value{m, target}))
}

// Apply points the site's readers at the replacement: its output, the
// shape readers of its intermediates, a lifted op's present outputs and the
// CastLike nodes that borrowed an intermediate's type.
func (r *Replacement) Apply(e *emit.Emitter) {
	s := &r.b.s
	replaceShapeReaders(e, s, r.b.readers)
	r.b.rewirePresent(e)
	rewireTypeOnly(s, r.Out)
	e.G.ReplaceAllUses(s.Output, r.Out)
}

// scaledQ is Q as (…, Nq, Dqk) with the site's per-head scales applied,
// in Q's type. Only matched sites have QScales and only lifted ones pack
// heads, so the scales never meet a Q whose heads naturalQ split.
func (b *build) scaledQ(e *emit.Emitter) *graph.Value {
	q := b.naturalQ(e)
	for _, t := range b.s.QScales {
		c := t.Value
		if c.Type.DType != q.Type.DType {
			c = e.Op("Cast", "", []*graph.Value{c}, graph.IntAttr("to", int64(q.Type.DType)))
		}
		op := "Mul"
		if t.Div {
			op = "Div"
		}
		q = e.Op(op, "", []*graph.Value{q, c})
	}
	return q
}

// naturalQ returns Q as (…, Nq, Dqk).
func (b *build) naturalQ(e *emit.Emitter) *graph.Value {
	switch {
	case b.s.PackedHeads:
		return splitHeads(e, b.s.Q, b.s.Heads)
	case b.s.Perm.Q != nil:
		return e.Transpose(b.s.Q, b.s.Perm.Q...)
	}
	return b.s.Q
}

// naturalK returns K as (…, Nk, Dqk), after the KV cache when there is one.
func (b *build) naturalK(e *emit.Emitter) *graph.Value {
	return b.naturalKV(e, b.s.K, b.s.KTransposed, b.s.Perm.K, b.s.PastK, 0)
}

// naturalV returns V as (…, Nk, Dv), after the KV cache when there is one.
func (b *build) naturalV(e *emit.Emitter) *graph.Value {
	return b.naturalKV(e, b.s.V, b.s.VChannelsFirst, b.s.Perm.V, b.s.PastV, 1)
}

// naturalKV puts K or V (x, its last two axes swapped when swapped, or
// permuted by perm) in (…, N, D) order behind its cache and keeps it as
// present output i.
func (b *build) naturalKV(e *emit.Emitter, x *graph.Value, swapped bool, perm []int64, past *graph.Value, i int) *graph.Value {
	switch {
	case swapped:
		x = e.SwapLast2(x)
	case perm != nil:
		x = e.Transpose(x, perm...)
	case b.s.PackedHeads:
		x = splitHeads(e, x, b.s.KVHeads)
	}
	if r := int64(b.s.Rank); b.s.KVBroadcast && x.Type.Rank() < int(r) {
		x = expandOver(e, x, b.naturalQ(e), r)
	}
	x = appendCache(e, past, x)
	b.present[i] = x
	return x
}

// expandOver broadcasts x, whose last two axes are (N, D) and which has
// fewer axes than the rank-r q, to q's leading dims: keys shared by every
// batch and head (match.Match.KVBroadcast) become the (…, N, D) operand the
// fused ops read. Expand is exact; the copy is one K or V per batch·head.
// Static dims give a constant target shape, others Shape arithmetic.
func expandOver(e *emit.Emitter, x, q *graph.Value, r int64) *graph.Value {
	dims := append(append([]graph.Dim{}, q.Type.Shape[:r-2]...), x.Type.Shape[x.Type.Rank()-2:]...)
	if static, ok := staticDims(dims); ok {
		return e.Op("Expand", "", []*graph.Value{x, e.I64(static...)})
	}
	shape := e.Op("Concat", "", []*graph.Value{e.ShapeSlice(q, 0, r-2), e.ShapeSlice(x, -2, int64(x.Type.Rank()))}, graph.IntAttr("axis", 0))
	return e.Op("Expand", "", []*graph.Value{x, shape})
}

// staticDims is dims as integers when every one is known.
func staticDims(dims []graph.Dim) ([]int64, bool) {
	out := make([]int64, len(dims))
	for i, d := range dims {
		v, ok := d.Value()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// splitHeads is the adapter (B, N, H·D) → (B, H, N, D); cleanup cancels it
// against a target that merges heads again (MultiHeadAttention).
func splitHeads(e *emit.Emitter, x *graph.Value, heads graph.Dim) *graph.Value {
	h, _ := heads.Value()
	return e.Transpose(e.Reshape(x, 0, 0, h, -1), 0, 2, 1, 3)
}

// appendCache concatenates a KV cache (B, Hkv, P, D) before x on the key axis.
func appendCache(e *emit.Emitter, past, x *graph.Value) *graph.Value {
	if past == nil {
		return x
	}
	return e.Op("Concat", "", []*graph.Value{past, x}, graph.IntAttr("axis", 2))
}

// restoreOutput turns a (…, Nq, Dv) result into the site's output layout.
func (b *build) restoreOutput(e *emit.Emitter, out *graph.Value) *graph.Value {
	s := &b.s
	switch {
	case s.VChannelsFirst:
		out = e.SwapLast2(out)
	case s.PackedHeads:
		out = e.Reshape(e.Transpose(out, 0, 2, 1, 3), 0, 0, -1)
	case s.Perm.Out != nil:
		out = e.Transpose(out, s.Perm.Out...)
	}
	if want := s.Output.Type.DType; want != graph.Undefined && want != out.Type.DType {
		out = e.Op("Cast", "", []*graph.Value{out}, graph.IntAttr("to", int64(want)))
	}
	return out
}

// maskInput builds the one mask tensor a fused op reads from the site's mask
// terms. A single bool term stays bool (the canonical op states the fill it
// drops keys with as mask_fill, from s.Fills: passes/match/resolve/rows.go);
// otherwise every term becomes additive in dtype dt (a finite fill as
// itself) and they are summed. No term is expanded over heads, except a
// term added in a batch view of the scores (Swin's windows, BLOOM's heads),
// which is tiled over that view's two split axes to reach the site's frame
// (unview). Each target lowers the bool mask as it reads one (passes/lower).
func maskInput(e *emit.Emitter, s *match.Match, dt graph.DType) (*graph.Value, error) {
	if len(s.Masks) == 0 {
		return nil, nil
	}
	if len(s.Masks) == 1 && s.Masks[0].Kind == masks.Bool {
		t := s.Masks[0]
		v := t.Value
		if t.SameRows {
			v = rowOf(e, v, 1)
		}
		if t.Inverted {
			v = e.Op("Not", "", []*graph.Value{v})
		}
		return unview(e, s, t, v)
	}
	var sum *graph.Value
	for _, t := range s.Masks {
		v, err := termBias(e, s, t, dt)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = v
		} else {
			sum = e.Op("Add", "", []*graph.Value{sum, v})
		}
	}
	return sum, nil
}

func termBias(e *emit.Emitter, s *match.Match, t masks.Term, dt graph.DType) (*graph.Value, error) {
	v := t.Value
	switch {
	case t.KeyRow:
		v = keyRow(e, v)
	case t.SameRows:
		v = rowOf(e, v, 1)
	}
	switch {
	case t.Fill != nil:
		v = e.BoolToBias(v, t.Inverted, *t.Fill, dt)
	case t.Kind == masks.Bool:
		v = e.BoolToBias(v, t.Inverted, emit.NegInf, dt)
	case t.Negated:
		v = e.Op("Neg", "", []*graph.Value{v})
	}
	if t.Scale != 0 && t.Scale != 1 {
		// added before a scale of the scores (masks.Term.Scale)
		v = e.Op("Mul", "", []*graph.Value{v, e.Scalar(v.Type.DType, t.Scale)})
	}
	if v.Type.DType != dt && v.Type.DType != graph.Undefined {
		v = e.Op("Cast", "", []*graph.Value{v}, graph.IntAttr("to", int64(dt)))
	}
	if t.Ramp != nil {
		// ALiBi's per-key form: slopes · key positions (passes/match/alibi.go).
		r := e.Op("Cast", "", []*graph.Value{t.Ramp}, graph.IntAttr("to", int64(dt)))
		if v = e.Op("Mul", "", []*graph.Value{v, r}); t.NegRamp {
			v = e.Op("Neg", "", []*graph.Value{v})
		}
	}
	return unview(e, s, t, v)
}

// keyRow is the last query row of a term, (…, 1, Nk): a new constant for a
// constant term (the usual case: dynamo folds ALiBi with causal), else a
// Slice.
func keyRow(e *emit.Emitter, v *graph.Value) *graph.Value {
	if c := v.Const; c != nil && len(c.Dims) >= 2 {
		if row, ok := lastRow(c); ok {
			return e.G.AddInit(e.Prefix+"/key_row", row)
		}
	}
	return e.Op("Slice", "", []*graph.Value{v, e.I64(-1), e.I64(math.MaxInt64), e.I64(-2)})
}

// lastRow slices row Nq−1 of every plane of c.
func lastRow(c *graph.Tensor) (*graph.Tensor, bool) {
	r := len(c.Dims)
	rows, cols := c.Dims[r-2], c.Dims[r-1]
	raw, err := c.Raw()
	size := c.DType.Bits() / 8
	if err != nil || size == 0 || int64(len(raw)) != c.Numel()*int64(size) {
		return nil, false
	}
	var out []byte
	plane, row := rows*cols*int64(size), cols*int64(size)
	for base := int64(0); base < int64(len(raw)); base += plane {
		out = append(out, raw[base+plane-row:base+plane]...)
	}
	dims := append(append([]int64(nil), c.Dims[:r-2]...), 1, cols)
	return graph.NewTensor("", c.DType, dims, out), true
}

// unview brings a term added in a view of the scores whose batch axis is
// split in two, (A, W, …) — Swin's windows, BLOOM's heads — to the site's
// frame: (1|A, 1|W, …) is tiled over (A, W), then the two axes are merged.
// Trailing dims the term broadcasts over stay 1; a term without the A axis
// gets a leading 1, one without A and W broadcasts alike in both frames.
func unview(e *emit.Emitter, s *match.Match, t masks.Term, v *graph.Value) (*graph.Value, error) {
	if t.BatchFold != nil {
		return unfoldTerm(e, t, v)
	}
	if t.BatchView == nil {
		return v, nil
	}
	sh := t.Value.Type.Shape
	r := len(sh)
	if r < s.Rank {
		return v, nil
	}
	if r == s.Rank {
		v, sh, r = e.Unsqueeze(v, 0), append(graph.Shape{graph.D(1)}, sh...), r+1
	}
	w, ok := t.BatchView[1].Value()
	if !ok || r < 3 {
		return nil, match.Rejectf(match.CodeBuild, t.Value, "mask %q is added in a batch view with symbolic window count", t.Value.Name)
	}
	// Expand broadcasts both ways: ones keep the term's own trailing dims
	// when they are not all known.
	ints, static := sh.Ints()
	trail := make([]int64, r-2)
	for i := range trail {
		trail[i] = 1
	}
	if static {
		trail = ints[2:]
	}
	lead := append([]int64{w}, trail...)
	var target *graph.Value
	if a, ok := t.BatchView[0].Value(); ok {
		target = e.I64(append([]int64{a}, lead...)...)
	} else {
		// A = batch(Q) / W, computed at run time.
		b := e.ShapeSlice(s.Q, 0, 1)
		a := e.Op("Div", "", []*graph.Value{b, e.I64(w)})
		target = e.Op("Concat", "", []*graph.Value{a, e.I64(lead...)}, graph.IntAttr("axis", 0))
	}
	full := e.Op("Expand", "", []*graph.Value{v, target})
	if static {
		return e.Reshape(full, append([]int64{-1}, trail...)...), nil
	}
	merged := e.Op("Concat", "", []*graph.Value{e.I64(-1), e.ShapeSlice(full, 2, int64(r))}, graph.IntAttr("axis", 0))
	return e.Op("Reshape", "", []*graph.Value{full, merged}), nil
}

// unfoldTerm splits the batch axis of a term added to bmm scores (1|A·W, …)
// into the (A, W, …) of the rank-4 site.
func unfoldTerm(e *emit.Emitter, t masks.Term, v *graph.Value) (*graph.Value, error) {
	sh := t.Value.Type.Shape
	w, ok := t.BatchFold[1].Value()
	if len(sh) < 3 {
		return v, nil // it broadcasts over B·H, and so over (B, H)
	}
	if !ok || len(sh) != 3 {
		return nil, match.Rejectf(match.CodeBuild, t.Value, "mask %q is added to scores whose head count is symbolic", t.Value.Name)
	}
	if sh[0].Static() && sh[0].C == 1 {
		return e.Unsqueeze(v, 0), nil
	}
	// (A·W, 1, x, y) → (A, W, x, y); Reshape's 0 copies x and y, known or not.
	return e.Reshape(e.Unsqueeze(v, 1), -1, w, 0, 0), nil
}

// liftMaskRank makes a rank-3 mask of a rank-3 (bmm) site broadcast against
// the fused op's (B, 1, Nq, Nk) view.
func liftMaskRank(e *emit.Emitter, s *match.Match, m *graph.Value) *graph.Value {
	if m != nil && s.Rank == 3 && m.Type.Rank() == 3 {
		return e.Unsqueeze(m, 1)
	}
	return m
}

// scoreDType is the type the scores are computed in (float32 when the site
// casts around its softmax).
func scoreDType(s *match.Match) graph.DType {
	if s.SoftCasts {
		return graph.Float32
	}
	return s.DType
}
