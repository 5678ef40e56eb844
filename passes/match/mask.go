package match

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
	"github.com/attnopt/attnopt/passes/match/resolve"
)

// Mask family. Variants:
//   add        scores + bias                      (float bias, additive)
//   add_where  scores + Where(mask, 0, -inf)      (bool mask)
//   where      Where(mask, scores, -inf)          (bool mask)
//   where      Where(mask, scores, c), c finite   (kept as an additive mask)
//   causal_where  Where(tril slice, scores, c)    (causal, bottom-right)
// Inverted conditions (Where(m, -inf, scores), masked_fill style) record the
// mask as inverted; the rewrite negates it.

// noteFillType records the type a mask term is added in.
func (s *draft) noteFillType(n *graph.Node) {
	if s.Fills.DType == graph.Undefined && n.Output(0) != nil {
		s.Fills.DType = n.Output(0).Type.DType
	}
}

// addMask records one mask term. Several terms (a causal Where and a
// padding bias, say) are combined by stage 1 into one additive bias.
func (m *matcher) addMask(s *draft, t masks.Term) {
	s.biasInputs = append(s.biasInputs, t.Value)
	s.Masks, s.maskForm = resolve.Append(s.Masks, s.maskForm, t)
}

// addTerm is the bias of scores + bias.
type addTerm struct{ x, bias *graph.Value }

var addForms = []maskForm[addTerm]{
	// A causal triangle, possibly combined with padding terms.
	{take: func(m *matcher, n *graph.Node, t addTerm, s *draft) (bool, *Reject) {
		if !m.peelCausalBias(t.bias, s) {
			return false, nil
		}
		s.biasInputs = append(s.biasInputs, t.bias)
		return true, nil
	}},
	// Add(Where(mask, 0, -inf)): a bool mask in additive form.
	{take: func(m *matcher, n *graph.Node, t addTerm, s *draft) (bool, *Reject) {
		w := t.bias.Producer()
		if w == nil || !w.Is("Where") {
			return false, nil
		}
		cond, inv, ok := posmask.BoolMaskOfWhere(w)
		if !ok {
			return false, nil
		}
		s.biasInputs = append(s.biasInputs, t.bias)
		m.addMask(s, masks.Term{Kind: masks.Bool, Value: cond, Inverted: inv, Fill: masks.FiniteFill(whereFill(w)), Form: masks.FormAddWhere})
		return true, nil
	}},
	// diffusers' baddbmm(empty, q, kᵀ, beta=0) adds a zero tensor.
	{take: func(m *matcher, n *graph.Node, t addTerm, s *draft) (bool, *Reject) {
		return isZeroTensor(t.bias), nil
	}},
	// Any other float bias.
	{take: func(m *matcher, n *graph.Node, t addTerm, s *draft) (bool, *Reject) {
		bias, x := t.bias, t.x
		if bias.Type.Ranked && x.Type.Ranked && len(bias.Type.Shape) > len(x.Type.Shape) {
			return true, reject(CodeMask, bias, "bias %q has rank %d, more than the scores' %d", bias.Name, len(bias.Type.Shape), len(x.Type.Shape))
		}
		m.addMask(s, masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormAdd})
		return true, nil
	}},
}

// peelAddMask handles scores + bias in either operand order.
func (m *matcher) peelAddMask(n *graph.Node, s *draft) (*graph.Value, *Reject) {
	a, b := n.Input(0), n.Input(1)
	x, bias := a, b
	if scoreLike(b) && !scoreLike(a) {
		x, bias = b, a
	}
	if !bias.Type.DType.IsFloat() && bias.Type.DType != graph.Undefined {
		return nil, reject(CodeMask, bias, "node %q adds %q of type %s to the scores", n.Label(), bias.Name, bias.Type.DType)
	}
	s.noteFillType(n)
	if r := takeMask(m, addForms, n, addTerm{x, bias}, s); r != nil {
		return nil, r
	}
	return x, nil
}

// peelSubMask handles scores − bias (Funnel: s − INF·(1 − m), INF = 1e6):
// an additive term the op adds negated. INF·(1 − m) states its fill, −INF
// where m is 0, which lets the op find the rows it fills entirely
// (passes/match/resolve/rows.go finiteFloor).
func (m *matcher) peelSubMask(n *graph.Node, s *draft) (*graph.Value, []*graph.Node, *Reject) {
	x, bias := n.Input(0), n.Input(1)
	if scores, b, mul, ok := subBlend(x, bias); ok {
		// Megatron's w·b − c·(1 − b): Where(b, w, −c) when b holds only 0
		// and 1, which a Cast of a bool proves.
		cast := b.Producer()
		if !cast.IsFloatCast() || cast.Input(0).Type.DType != graph.Bool {
			return nil, nil, reject(CodeMask, b, "the scores are blended with mask %q as w·b − c·(1 − b), and %q is %s, not a cast of a bool: a multiplicative mask that is not provably 0 or 1", b.Name, b.Name, b.Type.DType)
		}
		c := complementScale(bias)
		if c < absorbingFill {
			// A dropped key scores −c itself, not s − c: the two differ on a
			// row that keeps no key unless c absorbs s.
			return nil, nil, reject(CodeMask, bias, "the scores are blended with mask %q as w·b − %g·(1 − b): a dropped key scores −%g itself, which an additive mask gives only for a fill of −1e30 or less", b.Name, c, c)
		}
		if r := m.onlyUse(mul.Output(0)); r != nil {
			return nil, nil, r
		}
		s.noteFillType(n)
		if r := takeMask(m, whereForms, n, whereTerm{cond: cast.Input(0), fill: -c}, s); r != nil {
			return nil, nil, r
		}
		return scores, []*graph.Node{mul}, nil
	}
	if !bias.Type.DType.IsFloat() && bias.Type.DType != graph.Undefined {
		return nil, nil, reject(CodeMask, bias, "node %q subtracts %q of type %s from the scores", n.Label(), bias.Name, bias.Type.DType)
	}
	if bias.Type.Ranked && x.Type.Ranked && len(bias.Type.Shape) > len(x.Type.Shape) {
		return nil, nil, reject(CodeMask, bias, "bias %q has rank %d, more than the scores' %d", bias.Name, len(bias.Type.Shape), len(x.Type.Shape))
	}
	s.noteFillType(n)
	m.addMask(s, masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormSub, Negated: true, Floor: -complementScale(bias)})
	return x, nil, nil
}

// absorbingFill is the least fill magnitude that absorbs any score: s − c
// rounds to −c in float32 (ulp(1e30) ≈ 7e22), so replacing a dropped
// key's score by −c and adding −c to it are the same.
const absorbingFill = 1e30

// subBlend recognises x − bias = Mul(w, b) − Mul(c, Sub(1, b)) (operands in
// either order): w the scores, b the same mask in both.
func subBlend(x, bias *graph.Value) (scores, b *graph.Value, mul *graph.Node, ok bool) {
	mul = x.Producer()
	if mul == nil || !mul.Is("Mul") || complementScale(bias) == 0 {
		return nil, nil, nil, false
	}
	var sub *graph.Node
	for _, in := range bias.Producer().Inputs {
		if p := in.Producer(); p != nil && p.Is("Sub") {
			sub = p
		}
	}
	for i := 0; i < 2; i++ {
		if mul.Input(i) == sub.Input(1) && scoreLike(mul.Input(1-i)) {
			return mul.Input(1 - i), mul.Input(i), mul, true
		}
	}
	return nil, nil, nil, false
}

// subtractsBias is the Sub rule's guard: the scores minus a tensor that is
// not computed from them.
func subtractsBias(n *graph.Node) bool { return scoreLike(n.Input(0)) && !scoreLike(n.Input(1)) }

// complementScale is c of c·(1 − m) (either operand order), 0 otherwise.
func complementScale(v *graph.Value) float64 {
	p := v.Producer()
	if p == nil || !p.Is("Mul") {
		return 0
	}
	for i := 0; i < 2; i++ {
		c, ok := p.Input(i).Scalar()
		sub := p.Input(1 - i).Producer()
		if !ok || c <= 0 || math.IsInf(c, 0) || sub == nil || !sub.Is("Sub") {
			continue
		}
		if one, ok := sub.Input(0).Scalar(); ok && one == 1 {
			return c
		}
	}
	return 0
}

// scoreLike reports whether v looks like the running score tensor rather
// than a bias: it is computed by the ops of the score chain.
func scoreLike(v *graph.Value) bool {
	p := v.Producer()
	for i := 0; p != nil && i < 8; i++ {
		switch {
		case p.Is("MatMul") || p.Is("Einsum") && len(p.Inputs) > 1:
			return true // a one-operand Einsum only permutes (XLNet's mask)
		case p.Is("Mul") || p.Is("Div") || p.Is("Cast") || p.Is("Add") || p.Is("Where"):
			idx := 0
			if p.Is("Where") {
				idx = 1
			}
			p = p.Input(idx).Producer()
		default:
			return false
		}
	}
	return false
}

// whereTerm is Where(cond, scores, fill), or Where(cond, fill, scores) when
// inverted.
type whereTerm struct {
	cond     *graph.Value
	fill     float64
	inverted bool
}

var whereForms = []maskForm[whereTerm]{
	// A slice of a lower-triangular buffer (GPT-2).
	{take: func(m *matcher, n *graph.Node, t whereTerm, s *draft) (bool, *Reject) {
		if t.inverted || !isCausalTril(t.cond) {
			return false, nil
		}
		if s.Causal {
			return true, reject(CodeCausal, n, "a second causal mask on the same scores")
		}
		// A row that sees no key (with a padding term, or Nq > Nk) still
		// gives the fill's result: the op records it (the site has no
		// other causal term, so nothing adds to it).
		s.Fills.Causal = masks.FiniteFill(t.fill)
		s.Causal = true
		if s.maskForm == "" {
			s.maskForm = masks.FormCausalWhere
		}
		return true, nil
	}},
	// A causal condition, possibly combined with padding conditions.
	{take: func(m *matcher, n *graph.Node, t whereTerm, s *draft) (bool, *Reject) {
		return m.peelCausalCond(t.cond, t.inverted, t.fill, s), nil
	}},
	// A bool mask filled with -inf.
	{take: func(m *matcher, n *graph.Node, t whereTerm, s *draft) (bool, *Reject) {
		if !posmask.NegInf(t.fill) {
			return false, nil
		}
		m.addMask(s, masks.Term{Kind: masks.Bool, Value: t.cond, Inverted: t.inverted, Fill: masks.FiniteFill(t.fill), Form: masks.FormWhere})
		return true, nil
	}},
	// A fill of −1e4 or less in float32 replaces the scores of the keys it
	// drops: on a row that keeps a key their exponentials underflow (as for
	// a bool mask), and a row that keeps none has every score equal to it,
	// so its softmax is uniform, the mean of V. A bool mask whose literal
	// rows add float32's lowest gives exactly that (s + lowest = lowest);
	// adding c itself would give softmax(s + c) there instead.
	{take: func(m *matcher, n *graph.Node, t whereTerm, s *draft) (bool, *Reject) {
		if t.fill > -1e4 || s.Fills.DType != graph.Float32 {
			return false, nil
		}
		lowest := -math.MaxFloat32
		m.addMask(s, masks.Term{Kind: masks.Bool, Value: t.cond, Inverted: t.inverted, Fill: &lowest, Form: masks.FormWhere})
		return true, nil
	}},
	// A moderate finite fill (above −1e4, or in float16) stays an additive
	// mask Where(mask, 0, c) built by the rewrite.
	{take: func(m *matcher, n *graph.Node, t whereTerm, s *draft) (bool, *Reject) {
		c := t.fill
		m.addMask(s, masks.Term{Kind: masks.Additive, Value: t.cond, Inverted: t.inverted, Fill: &c, Form: masks.FormWhere})
		return true, nil
	}},
}

// peelWhereMask handles Where(mask, scores, fill) and Where(mask, fill, scores).
func (m *matcher) peelWhereMask(n *graph.Node, s *draft) (*graph.Value, *Reject) {
	cond, a, b := n.Input(0), n.Input(1), n.Input(2)
	x, fill, inverted := a, b, false
	if _, ok := a.Scalar(); ok {
		x, fill, inverted = b, a, true
	}
	c, ok := fill.Scalar()
	if !ok {
		return nil, reject(CodeMask, fill, "node %q fills masked scores with %q, which is not a constant scalar", n.Label(), fill.Name)
	}
	s.noteFillType(n)
	if r := takeMask(m, whereForms, n, whereTerm{cond, c, inverted}, s); r != nil {
		return nil, r
	}
	return x, nil
}

// isCausalTril recognises a condition sliced from a constant lower-triangular
// buffer (GPT-2's registered `bias`), rows [Nk−Nq, Nk) and columns [0, Nk):
// exactly the bottom-right aligned causal mask.
func isCausalTril(cond *graph.Value) bool {
	v := cond
	if p := v.Producer(); p != nil && p.Is("Cast") {
		v = p.Input(0)
	}
	var slices []*graph.Node
	for p := v.Producer(); p != nil && p.Is("Slice"); p = v.Producer() {
		slices = append(slices, p)
		v = p.Input(0)
	}
	if v.Const == nil || len(slices) == 0 {
		return false
	}
	dims := v.Const.Dims
	if len(dims) < 2 || dims[len(dims)-1] != dims[len(dims)-2] || v.Const.Numel() > 1<<24 {
		return false
	}
	n := dims[len(dims)-1]
	vals, err := v.Const.Float64s()
	if err != nil {
		return false
	}
	for i := int64(0); i < n; i++ {
		for j := int64(0); j < n; j++ {
			want := 0.0
			if j <= i {
				want = 1
			}
			if (vals[i*n+j] != 0) != (want != 0) {
				return false
			}
		}
	}
	// Row slice must end where the column slice ends and columns start at 0.
	type end struct {
		d   graph.Dim
		v   *graph.Value
		idx int
	}
	var rowEnd, colEnd *end
	colStartZero := true
	rank := len(dims)
	for _, sl := range slices {
		starts, ok1 := sl.Input(1).IntContent()
		ends, ok2 := sl.Input(2).IntContent()
		if !ok1 || !ok2 {
			return false
		}
		var axes []int64
		if sl.Input(3) == nil {
			for i := range starts {
				axes = append(axes, int64(i))
			}
		} else if axes, ok1 = sl.Input(3).Ints(); !ok1 {
			return false
		}
		for k, a := range axes {
			if a < 0 {
				a += int64(rank)
			}
			e := &end{ends[k], sl.Input(2), k}
			switch int(a) {
			case rank - 2:
				rowEnd = e
			case rank - 1:
				colEnd = e
				if !(starts[k].Static() && starts[k].C == 0) {
					colStartZero = false
				}
			}
		}
	}
	if !colStartZero || rowEnd == nil || colEnd == nil {
		return false
	}
	return rowEnd.d.Equal(colEnd.d) || (rowEnd.v == colEnd.v && rowEnd.idx == colEnd.idx)
}

// isZeroTensor recognises a bias that is provably all zeros: a zero constant,
// ConstantOfShape with fill 0, or a product with a zero scalar of one of
// those.
func isZeroTensor(v *graph.Value) bool {
	if f, ok := v.Floats(); ok {
		for _, x := range f {
			if x != 0 {
				return false
			}
		}
		return len(f) > 0
	}
	p := v.Producer()
	switch {
	case p == nil:
		return false
	case p.Is("ConstantOfShape"):
		a := p.Attr("value")
		if a == nil || a.T == nil {
			return true // the default fill is 0
		}
		f, err := a.T.Float64s()
		return err == nil && len(f) == 1 && f[0] == 0
	case p.Is("Mul"):
		for i, in := range p.Inputs {
			if z, ok := in.Scalar(); ok && z == 0 && isZeroOrFinite(p.Input(1-i)) {
				return true
			}
		}
	case p.Is("Cast"):
		return isZeroTensor(p.Input(0))
	}
	return false
}

// isZeroOrFinite accepts the other factor of x·0 only when it cannot hold
// NaN or Inf: a constant fill.
func isZeroOrFinite(v *graph.Value) bool {
	if p := v.Producer(); p != nil && p.Is("ConstantOfShape") {
		return true
	}
	return isZeroTensor(v)
}
