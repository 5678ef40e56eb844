// Package posmask recognises the masks a site builds from positions and the
// values that drop a key: causal triangles (j <= i + off, as a constant,
// Trilu, or a comparison of two aranges), their sliding-window bands,
// index ramps (ALiBi's distances), and what counts as a dropping fill. It
// reads values only: the matcher (passes/match) decides what a site's terms
// mean and binds them.
package posmask

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Causal recognition. A mask term is causal when it provably keeps key j for
// query i exactly when j ≤ i + off over the last two axes and is the same
// along every other axis. Exporters build such terms as a constant (checked
// by value), Trilu of ones or of -inf, or a comparison of two aranges; they
// combine them with padding terms through Add, Min, Where and And. Every
// causal term becomes the op's `causal` attribute when its offset is the
// op's bottom-right alignment (off = Nk − Nq, which is 0 without a cache);
// the other terms stay mask inputs.

// Tri is a lower-triangular keep pattern j ≤ i + Off; Neg marks the
// complement (the pattern of positions to drop).
type Tri struct {
	Off graph.Dim
	Neg bool
}

func (t Tri) Flip() Tri { return Tri{t.Off, !t.Neg} }

// MaxConst bounds the constants checked element by element.
const MaxConst = 1 << 24

// BoolTri describes where v is nonzero (true), when that is triangular.
func BoolTri(v *graph.Value, depth int) (Tri, bool) {
	if depth > 12 || v == nil {
		return Tri{}, false
	}
	if v.Const != nil {
		return ConstTri(v.Const, func(x float64) bool { return x != 0 })
	}
	p := v.Producer()
	if p == nil {
		return Tri{}, false
	}
	switch {
	case KeepsPlane(p):
		return BoolTri(p.Input(0), depth+1)
	case p.Is("Cast"):
		// Casts between bool, integer and float keep nonzero-ness except
		// float to integer, which truncates.
		from := p.Input(0).Type.DType
		to := graph.DType(p.AttrInt("to", 0))
		if from.IsFloat() && !to.IsFloat() && to != graph.Bool {
			return Tri{}, false
		}
		return BoolTri(p.Input(0), depth+1)
	case p.Is("Not"):
		t, ok := BoolTri(p.Input(0), depth+1)
		return t.Flip(), ok
	case p.Is("Equal"):
		a, b := p.Input(0), p.Input(1)
		if _, ok := a.Scalar(); ok {
			a, b = b, a
		}
		if c, ok := b.Scalar(); ok && c == 0 {
			t, ok := BoolTri(a, depth+1)
			return t.Flip(), ok
		}
		if c, ok := b.Scalar(); ok && c == 1 && ZeroOne(a, depth+1) {
			return BoolTri(a, depth+1)
		}
	case p.Is("Where"):
		x, okX := p.Input(1).Scalar()
		y, okY := p.Input(2).Scalar()
		if okX && okY && (x == 0) != (y == 0) {
			t, ok := BoolTri(p.Input(0), depth+1)
			if x == 0 {
				t = t.Flip()
			}
			return t, ok
		}
	case p.Is("Sub"):
		// 1 − x of a 0/1 tensor.
		if c, ok := p.Input(0).Scalar(); ok && c == 1 && ZeroOne(p.Input(1), depth+1) {
			t, ok := BoolTri(p.Input(1), depth+1)
			return t.Flip(), ok
		}
	case p.Is("Mul"):
		// x·c with c a nonzero scalar keeps the pattern ((1 − m)·min).
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && c != 0 {
				return BoolTri(p.Input(i), depth+1)
			}
		}
	case p.Is("Trilu"):
		return triluTri(p, func(x float64) bool { return x != 0 })
	case p.Is("Less") || p.Is("LessOrEqual") || p.Is("Greater") || p.Is("GreaterOrEqual"):
		return compareTri(p)
	}
	return Tri{}, false
}

// KeepsPlane reports whether p is a Reshape, Expand or Unsqueeze that only
// changes the leading axes: the last two, the (query, key) plane, stay.
func KeepsPlane(p *graph.Node) bool {
	if IsNoopSlice(p) {
		return true
	}
	if !(p.Is("Reshape") || p.Is("Expand") || p.Is("Unsqueeze")) {
		return false
	}
	in, out := p.Input(0).Type, p.Output(0).Type
	if !in.Ranked || !out.Ranked || len(in.Shape) < 2 || len(out.Shape) < 2 {
		return false
	}
	ri, ro := len(in.Shape), len(out.Shape)
	return in.Shape[ri-1].Equal(out.Shape[ro-1]) && in.Shape[ri-2].Equal(out.Shape[ro-2])
}

// IsNoopSlice reports a Slice whose output provably has its input's shape:
// it keeps every element (transformers slices its mask to the keys' length,
// which the mask already has: graph/infer_shapeops.go prefixSliceShape).
func IsNoopSlice(p *graph.Node) bool {
	if p == nil || !p.Is("Slice") {
		return false
	}
	in, out := p.Input(0).Type, p.Output(0).Type
	if !in.Ranked || !out.Ranked || len(in.Shape) != len(out.Shape) {
		return false
	}
	for i := range in.Shape {
		if in.Shape[i].Unknown || !in.Shape[i].Equal(out.Shape[i]) {
			return false
		}
	}
	return true
}

// ZeroOne reports whether v holds only 0 and 1 (a bool cast, a Trilu of
// ones, a comparison).
func ZeroOne(v *graph.Value, depth int) bool {
	if v.Type.DType == graph.Bool {
		return true
	}
	if f, ok := v.Floats(); ok {
		for _, x := range f {
			if x != 0 && x != 1 {
				return false
			}
		}
		return true
	}
	p := v.Producer()
	switch {
	case p == nil || depth > 12:
		return false
	case p.Is("Cast"):
		return ZeroOne(p.Input(0), depth+1)
	case p.Is("Trilu"):
		return FilledWith(p.Input(0), func(x float64) bool { return x == 1 })
	case p.Is("Equal") || p.Is("Less") || p.Is("LessOrEqual") || p.Is("Greater") || p.Is("GreaterOrEqual") || p.Is("Not") || p.Is("And"):
		return true
	}
	return false
}

// BiasTri describes an additive mask that is 0 on kept keys and at most
// -1e30 (−inf, finfo.min) on dropped ones, when that is triangular.
func BiasTri(v *graph.Value, depth int) (Tri, bool) {
	if depth > 12 || v == nil {
		return Tri{}, false
	}
	if v.Const != nil {
		t, ok := ConstTri(v.Const, func(x float64) bool { return x == 0 })
		if !ok || !ConstValues(v.Const, func(x float64) bool { return x == 0 || NegInf(x) }) {
			return Tri{}, false
		}
		return t, true
	}
	p := v.Producer()
	if p == nil {
		return Tri{}, false
	}
	switch {
	case KeepsPlane(p) || p.IsFloatCast() && p.Input(0).Type.DType.IsFloat():
		return BiasTri(p.Input(0), depth+1)
	case p.Is("Where"):
		if cond, inv, ok := BoolMaskOfWhere(p); ok {
			t, ok := BoolTri(cond, depth+1)
			if inv {
				t = t.Flip()
			}
			return t, ok
		}
	case p.Is("Trilu"):
		// triu(full(-inf), 1): -inf above the diagonal, 0 on and below.
		t, ok := triluTri(p, func(x float64) bool { return NegInf(x) })
		return t.Flip(), ok && FilledWith(p.Input(0), NegInf)
	case p.Is("Mul"):
		// m·min with m a 0/1 tensor that marks the keys to drop.
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && NegInf(c) && ZeroOne(p.Input(i), depth+1) {
				t, ok := BoolTri(p.Input(i), depth+1)
				return t.Flip(), ok
			}
		}
	}
	return Tri{}, false
}

// ConstTri reads a constant whose last two axes hold a lower-triangular keep
// pattern (or its complement, a band's lower edge), the same for every
// leading index.
func ConstTri(c *graph.Tensor, keep func(float64) bool) (Tri, bool) {
	if t, ok := constLower(c, keep); ok {
		return t, true
	}
	t, ok := constLower(c, func(x float64) bool { return !keep(x) })
	return t.Flip(), ok
}

func constLower(c *graph.Tensor, keep func(float64) bool) (Tri, bool) {
	dims := c.Dims
	if len(dims) < 2 || c.Numel() > MaxConst || c.Numel() == 0 {
		return Tri{}, false
	}
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	vals, err := c.Float64s()
	if err != nil {
		return Tri{}, false
	}
	// The offset shows in any row that keeps some but not all keys.
	off, found := int64(0), false
	for i := int64(0); i < rows && !found; i++ {
		n := int64(0)
		for n < cols && keep(vals[i*cols+n]) {
			n++
		}
		if n > 0 && n < cols {
			off, found = n-1-i, true
		}
	}
	if !found {
		return Tri{}, false
	}
	plane := rows * cols
	for base := int64(0); base < int64(len(vals)); base += plane {
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				if keep(vals[base+i*cols+j]) != (j <= i+off) {
					return Tri{}, false
				}
			}
		}
	}
	return Tri{Off: graph.D(off)}, true
}

func ConstValues(c *graph.Tensor, ok func(float64) bool) bool {
	vals, err := c.Float64s()
	if err != nil {
		return false
	}
	for _, x := range vals {
		if !ok(x) {
			return false
		}
	}
	return true
}

// FilledWith reports whether every element of v satisfies ok: a constant,
// Expand or ConstantOfShape of such a scalar.
func FilledWith(v *graph.Value, ok func(float64) bool) bool {
	if v.Const != nil {
		return v.Const.Numel() <= MaxConst && ConstValues(v.Const, ok)
	}
	p := v.Producer()
	switch {
	case p == nil:
		return false
	case p.Is("Expand") || p.Is("Cast") && p.Input(0).Type.DType.IsFloat():
		return FilledWith(p.Input(0), ok)
	case p.Is("ConstantOfShape"):
		a := p.Attr("value")
		if a == nil || a.T == nil {
			return ok(0)
		}
		f, err := a.T.Float64s()
		return err == nil && len(f) == 1 && ok(f[0])
	}
	return false
}

// triluTri is the pattern of Trilu over a tensor whose elements all satisfy
// fill: lower (upper=0) keeps j ≤ i + k; upper keeps j ≥ i + k, the
// complement of j ≤ i + k − 1.
func triluTri(p *graph.Node, fill func(float64) bool) (Tri, bool) {
	if !FilledWith(p.Input(0), fill) {
		return Tri{}, false
	}
	k := int64(0)
	if in := p.Input(1); in != nil {
		ks, ok := in.Ints()
		if !ok || len(ks) != 1 {
			return Tri{}, false
		}
		k = ks[0]
	}
	if p.AttrInt("upper", 1) == 0 {
		return Tri{Off: graph.D(k)}, true
	}
	return Tri{Off: graph.D(k - 1), Neg: true}, true
}

// Ramp is a tensor equal to its index along one axis plus an offset;
// Axis counts from the right (0: key axis, 1: query axis).
type Ramp struct {
	Axis int
	Off  graph.Dim
}

// RampOf follows Range(start, ·, 1) through Unsqueeze, Reshape, Expand, Cast
// and the addition of a scalar.
func RampOf(v *graph.Value, depth int) (Ramp, bool) {
	if v.Const != nil {
		return constRamp(v.Const)
	}
	p := v.Producer()
	if p == nil || depth > 8 {
		return Ramp{}, false
	}
	switch {
	case p.Is("Range"):
		start, ok1 := p.Input(0).IntContent()
		if d, ok := p.Input(2).Scalar(); !ok || d != 1 || !ok1 || len(start) != 1 {
			return Ramp{}, false
		}
		return Ramp{0, start[0]}, true
	case p.Is("Cast") || p.Is("Expand"):
		return RampOf(p.Input(0), depth+1)
	case p.Is("Unsqueeze"):
		r, ok := RampOf(p.Input(0), depth+1)
		in, out := p.Input(0).Type, v.Type
		if !ok || !in.Ranked || !out.Ranked {
			return Ramp{}, false
		}
		axes := p.AttrInts("axes")
		if in := p.Input(1); in != nil {
			if axes, ok = in.Ints(); !ok {
				return Ramp{}, false
			}
		}
		rankOut := int64(len(out.Shape))
		inserted := map[int64]bool{}
		for _, a := range axes {
			if a < 0 {
				a += rankOut
			}
			inserted[a] = true
		}
		// Walk the output axes from the right, counting the input's.
		seen := 0
		for a := rankOut - 1; a >= 0; a-- {
			if inserted[a] {
				continue
			}
			if seen == r.Axis {
				return Ramp{int(rankOut - 1 - a), r.Off}, true
			}
			seen++
		}
		return Ramp{}, false
	case p.Is("Reshape"):
		// A Ramp viewed with unit axes added or removed around it (a 1-D
		// arange viewed as (1, N), or jax2onnx's (B, N) broadcast viewed as
		// (B, N, 1)): the axes longer than 1 keep their order and sizes.
		r, ok := RampOf(p.Input(0), depth+1)
		if !ok {
			return Ramp{}, false
		}
		return reshapedRamp(r, p.Input(0).Type, v.Type)
	case p.Is("Add") || p.Is("Sub"):
		for i := 0; i < 2; i++ {
			if i == 1 && p.Is("Sub") {
				break
			}
			c, ok := p.Input(1 - i).IntContent()
			if !ok || len(c) != 1 {
				continue
			}
			r, ok := RampOf(p.Input(i), depth+1)
			if !ok {
				return Ramp{}, false
			}
			if p.Is("Sub") {
				d, ok := DimMinus(r.Off, c[0])
				return Ramp{r.Axis, d}, ok
			}
			return Ramp{r.Axis, r.Off.Add(c[0])}, true
		}
	}
	return Ramp{}, false
}

// reshapedRamp follows Ramp r of type in through a Reshape to out that only
// adds or removes unit axes.
func reshapedRamp(r Ramp, in, out graph.Type) (Ramp, bool) {
	if !in.Ranked || !out.Ranked {
		return Ramp{}, false
	}
	at := len(in.Shape) - 1 - r.Axis
	for o := range out.Shape {
		if i, ok := graph.UnitViewAxis(in.Shape, out.Shape, o); ok && i == at {
			return Ramp{len(out.Shape) - 1 - o, r.Off}, true
		}
	}
	return Ramp{}, false
}

// constRamp reads a constant that counts along its one axis longer than 1
// (a folded arange, as TorchScript and dynamo store them).
func constRamp(c *graph.Tensor) (Ramp, bool) {
	axis := -1
	for i, d := range c.Dims {
		if d != 1 {
			if axis >= 0 {
				return Ramp{}, false
			}
			axis = i
		}
	}
	if axis < 0 || c.Numel() > MaxConst {
		return Ramp{}, false
	}
	vals, err := c.Float64s()
	if err != nil {
		return Ramp{}, false
	}
	for t, x := range vals {
		if x != vals[0]+float64(t) {
			return Ramp{}, false
		}
	}
	return Ramp{len(c.Dims) - 1 - axis, graph.D(int64(vals[0]))}, true
}

// DimMinus is a − b when it is representable.
func DimMinus(a, b graph.Dim) (graph.Dim, bool) {
	switch {
	case b.Static() && b.C == 0:
		return a, true
	case a.Static() && b.Static():
		return graph.D(a.C - b.C), true
	case a.Equal(b):
		return graph.D(0), true
	}
	return graph.UnknownDim, false
}

// compareTri reads a comparison of a query Ramp (i + ro) with a key Ramp
// (j + co).
func compareTri(p *graph.Node) (Tri, bool) {
	a, okA := RampOf(p.Input(0), 0)
	b, okB := RampOf(p.Input(1), 0)
	if !okA || !okB || a.Axis == b.Axis || a.Axis > 1 || b.Axis > 1 {
		return Tri{}, false
	}
	op := p.OpType
	if a.Axis == 1 {
		// Put the key Ramp first: row ⋈ col is col ⋈' row.
		a, b = b, a
		op = map[string]string{"Less": "Greater", "LessOrEqual": "GreaterOrEqual", "Greater": "Less", "GreaterOrEqual": "LessOrEqual"}[op]
	}
	// j + co ⋈ i + ro, with d = ro − co.
	d, ok := DimMinus(b.Off, a.Off)
	if !ok {
		return Tri{}, false
	}
	switch op {
	case "LessOrEqual": // j ≤ i + d
		return Tri{Off: d}, true
	case "Less": // j ≤ i + d − 1
		return Tri{Off: d.Add(graph.D(-1))}, true
	case "Greater": // j > i + d
		return Tri{Off: d, Neg: true}, true
	case "GreaterOrEqual": // j ≥ i + d: not j ≤ i + d − 1
		return Tri{Off: d.Add(graph.D(-1)), Neg: true}, true
	}
	return Tri{}, false
}

// constBand reads a constant whose last two axes keep exactly the keys
// i + lo < j ≤ i + hi (a causal sliding window folded into one constant,
// Gemma 3 under dynamo), the same for every leading index: the causal
// triangle j ≤ i + hi and the band's lower edge, the complement of
// j ≤ i + lo. ok is false when either edge never shows, or the upper one
// is not bottom-right aligned (hi = Nk − Nq).
func constBand(c *graph.Tensor, keep func(float64) bool) (upper, lower Tri, ok bool) {
	dims := c.Dims
	if len(dims) < 2 || c.Numel() > MaxConst || c.Numel() == 0 {
		return Tri{}, Tri{}, false
	}
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	vals, err := c.Float64s()
	if err != nil {
		return Tri{}, Tri{}, false
	}
	var hi, lo int64
	foundHi, foundLo := false, false
	for i := int64(0); i < rows; i++ {
		first, last := int64(-1), int64(-1)
		for j := int64(0); j < cols; j++ {
			if keep(vals[i*cols+j]) {
				if first < 0 {
					first = j
				}
				last = j
			}
		}
		if first < 0 {
			continue
		}
		if !foundHi && last < cols-1 {
			hi, foundHi = last-i, true
		}
		if !foundLo && first > 0 {
			lo, foundLo = first-1-i, true
		}
	}
	// Only the op's bottom-right causal edge: a symmetric local band
	// (ModernBERT) stays a mask as it is.
	if !foundHi || !foundLo || lo >= hi || hi != cols-rows {
		return Tri{}, Tri{}, false
	}
	plane := rows * cols
	for base := int64(0); base < int64(len(vals)); base += plane {
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				if keep(vals[base+i*cols+j]) != (j <= i+hi && j > i+lo) {
					return Tri{}, Tri{}, false
				}
			}
		}
	}
	return Tri{Off: graph.D(hi)}, Tri{Off: graph.D(lo), Neg: true}, true
}

// LeafBand reads a constant mask leaf (bool, or a 0/−inf bias) that is a
// causal triangle and a band's lower edge at once.
func LeafBand(v *graph.Value, bias, inverted bool) (causal, band Tri, ok bool) {
	for p := v.Producer(); p != nil && KeepsPlane(p); p = v.Producer() {
		v = p.Input(0)
	}
	if v.Const == nil {
		return Tri{}, Tri{}, false
	}
	keep := func(x float64) bool { return (x != 0) != inverted }
	if bias {
		if !ConstValues(v.Const, func(x float64) bool { return x == 0 || NegInf(x) }) {
			return Tri{}, Tri{}, false
		}
		keep = func(x float64) bool { return x == 0 }
	}
	return constBand(v.Const, keep)
}

// NegInf reports whether x is a fill that removes a key: -inf, or a finite
// value so negative that exp underflows in every float type (finfo.min).
func NegInf(x float64) bool { return math.IsInf(x, -1) || x <= -1e30 }

// DropsKey reports a fill that drops a key from a softmax in type dt:
// −inf or at most −1e30, or float16's finfo.min (−65504), which dynamo's
// fp16 exports fill with (every score plus it is exp(·) = 0 in float16
// next to any kept key).
func DropsKey(x float64, dt graph.DType) bool {
	return NegInf(x) || dt == graph.Float16 && x <= -65504
}

// BoolMaskOfWhere recognises Where(m, 0, -inf) and Where(m, -inf, 0): the
// additive form of a boolean mask. inverted is true when m marks the keys
// to drop.
func BoolMaskOfWhere(w *graph.Node) (cond *graph.Value, inverted, ok bool) {
	x, okX := w.Input(1).Scalar()
	y, okY := w.Input(2).Scalar()
	if !okX || !okY {
		return nil, false, false
	}
	dt := w.Output(0).Type.DType
	switch {
	case x == 0 && DropsKey(y, dt):
		return w.Input(0), false, true
	case DropsKey(x, dt) && y == 0:
		return w.Input(0), true, true
	}
	return nil, false, false
}

// Unexpand looks through an Expand whose input broadcasts the same way, so
// the fused op reads the mask at its own size, and through an And with a
// constant that is true everywhere (Keras ands its mask with
// ones_like(scores), which tf2onnx folds into a (B, H, Nq, Nk) constant).
func Unexpand(v *graph.Value) *graph.Value {
	for i := 0; i < 4; i++ {
		p := v.Producer()
		switch {
		case p != nil && p.Is("Expand") && p.Input(0).Type.Ranked:
			v = p.Input(0)
		case p != nil && p.Is("And") && AllTrue(p.Input(0)) && p.Input(1).Type.Ranked:
			v = p.Input(1)
		case p != nil && p.Is("And") && AllTrue(p.Input(1)) && p.Input(0).Type.Ranked:
			v = p.Input(0)
		default:
			return v
		}
	}
	return v
}

// AllTrue says v is a bool constant with no false element: And with it
// changes nothing but the broadcast shape.
func AllTrue(v *graph.Value) bool {
	c := v.Const
	if c == nil || c.DType != graph.Bool || c.Numel() > MaxConst {
		return false
	}
	return ConstValues(c, func(x float64) bool { return x != 0 })
}
