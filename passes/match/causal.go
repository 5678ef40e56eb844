package match

import (
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

// tri is a lower-triangular keep pattern j ≤ i + off; neg marks the
// complement (the pattern of positions to drop).
type tri struct {
	off graph.Dim
	neg bool
}

func (t tri) flip() tri { return tri{t.off, !t.neg} }

// maxTriConst bounds the constants checked element by element.
const maxTriConst = 1 << 24

// boolTri describes where v is nonzero (true), when that is triangular.
func boolTri(v *graph.Value, depth int) (tri, bool) {
	if depth > 12 || v == nil {
		return tri{}, false
	}
	if v.Const != nil {
		return constTri(v.Const, func(x float64) bool { return x != 0 })
	}
	p := v.Producer()
	if p == nil {
		return tri{}, false
	}
	switch {
	case keepsPlane(p):
		return boolTri(p.Input(0), depth+1)
	case p.Is("Cast"):
		// Casts between bool, integer and float keep nonzero-ness except
		// float to integer, which truncates.
		from := p.Input(0).Type.DType
		to := graph.DType(p.AttrInt("to", 0))
		if from.IsFloat() && !to.IsFloat() && to != graph.Bool {
			return tri{}, false
		}
		return boolTri(p.Input(0), depth+1)
	case p.Is("Not"):
		t, ok := boolTri(p.Input(0), depth+1)
		return t.flip(), ok
	case p.Is("Equal"):
		a, b := p.Input(0), p.Input(1)
		if _, ok := a.Scalar(); ok {
			a, b = b, a
		}
		if c, ok := b.Scalar(); ok && c == 0 {
			t, ok := boolTri(a, depth+1)
			return t.flip(), ok
		}
		if c, ok := b.Scalar(); ok && c == 1 && zeroOne(a, depth+1) {
			return boolTri(a, depth+1)
		}
	case p.Is("Where"):
		x, okX := p.Input(1).Scalar()
		y, okY := p.Input(2).Scalar()
		if okX && okY && (x == 0) != (y == 0) {
			t, ok := boolTri(p.Input(0), depth+1)
			if x == 0 {
				t = t.flip()
			}
			return t, ok
		}
	case p.Is("Sub"):
		// 1 − x of a 0/1 tensor.
		if c, ok := p.Input(0).Scalar(); ok && c == 1 && zeroOne(p.Input(1), depth+1) {
			t, ok := boolTri(p.Input(1), depth+1)
			return t.flip(), ok
		}
	case p.Is("Mul"):
		// x·c with c a nonzero scalar keeps the pattern ((1 − m)·min).
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && c != 0 {
				return boolTri(p.Input(i), depth+1)
			}
		}
	case p.Is("Trilu"):
		return triluTri(p, func(x float64) bool { return x != 0 })
	case p.Is("Less") || p.Is("LessOrEqual") || p.Is("Greater") || p.Is("GreaterOrEqual"):
		return compareTri(p)
	}
	return tri{}, false
}

// keepsPlane reports whether p is a Reshape, Expand or Unsqueeze that only
// changes the leading axes: the last two, the (query, key) plane, stay.
func keepsPlane(p *graph.Node) bool {
	if isNoopSlice(p) {
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

// isNoopSlice reports a Slice whose output provably has its input's shape:
// it keeps every element (transformers slices its mask to the keys' length,
// which the mask already has: graph/infer_shapeops.go prefixSliceShape).
func isNoopSlice(p *graph.Node) bool {
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

// zeroOne reports whether v holds only 0 and 1 (a bool cast, a Trilu of
// ones, a comparison).
func zeroOne(v *graph.Value, depth int) bool {
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
		return zeroOne(p.Input(0), depth+1)
	case p.Is("Trilu"):
		return filledWith(p.Input(0), func(x float64) bool { return x == 1 })
	case p.Is("Equal") || p.Is("Less") || p.Is("LessOrEqual") || p.Is("Greater") || p.Is("GreaterOrEqual") || p.Is("Not") || p.Is("And"):
		return true
	}
	return false
}

// biasTri describes an additive mask that is 0 on kept keys and at most
// -1e30 (−inf, finfo.min) on dropped ones, when that is triangular.
func biasTri(v *graph.Value, depth int) (tri, bool) {
	if depth > 12 || v == nil {
		return tri{}, false
	}
	if v.Const != nil {
		t, ok := constTri(v.Const, func(x float64) bool { return x == 0 })
		if !ok || !constValues(v.Const, func(x float64) bool { return x == 0 || negInf(x) }) {
			return tri{}, false
		}
		return t, true
	}
	p := v.Producer()
	if p == nil {
		return tri{}, false
	}
	switch {
	case keepsPlane(p) || isFloatCast(p) && p.Input(0).Type.DType.IsFloat():
		return biasTri(p.Input(0), depth+1)
	case p.Is("Where"):
		if cond, inv, ok := boolMaskOfWhere(p); ok {
			t, ok := boolTri(cond, depth+1)
			if inv {
				t = t.flip()
			}
			return t, ok
		}
	case p.Is("Trilu"):
		// triu(full(-inf), 1): -inf above the diagonal, 0 on and below.
		t, ok := triluTri(p, func(x float64) bool { return negInf(x) })
		return t.flip(), ok && filledWith(p.Input(0), negInf)
	case p.Is("Mul"):
		// m·min with m a 0/1 tensor that marks the keys to drop.
		for i := 0; i < 2; i++ {
			if c, ok := p.Input(1 - i).Scalar(); ok && negInf(c) && zeroOne(p.Input(i), depth+1) {
				t, ok := boolTri(p.Input(i), depth+1)
				return t.flip(), ok
			}
		}
	}
	return tri{}, false
}

// constTri reads a constant whose last two axes hold a lower-triangular keep
// pattern (or its complement, a band's lower edge), the same for every
// leading index.
func constTri(c *graph.Tensor, keep func(float64) bool) (tri, bool) {
	if t, ok := constLower(c, keep); ok {
		return t, true
	}
	t, ok := constLower(c, func(x float64) bool { return !keep(x) })
	return t.flip(), ok
}

func constLower(c *graph.Tensor, keep func(float64) bool) (tri, bool) {
	dims := c.Dims
	if len(dims) < 2 || c.Numel() > maxTriConst || c.Numel() == 0 {
		return tri{}, false
	}
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	vals, err := c.Float64s()
	if err != nil {
		return tri{}, false
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
		return tri{}, false
	}
	plane := rows * cols
	for base := int64(0); base < int64(len(vals)); base += plane {
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				if keep(vals[base+i*cols+j]) != (j <= i+off) {
					return tri{}, false
				}
			}
		}
	}
	return tri{off: graph.D(off)}, true
}

func constValues(c *graph.Tensor, ok func(float64) bool) bool {
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

// filledWith reports whether every element of v satisfies ok: a constant,
// Expand or ConstantOfShape of such a scalar.
func filledWith(v *graph.Value, ok func(float64) bool) bool {
	if v.Const != nil {
		return v.Const.Numel() <= maxTriConst && constValues(v.Const, ok)
	}
	p := v.Producer()
	switch {
	case p == nil:
		return false
	case p.Is("Expand") || p.Is("Cast") && p.Input(0).Type.DType.IsFloat():
		return filledWith(p.Input(0), ok)
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
func triluTri(p *graph.Node, fill func(float64) bool) (tri, bool) {
	if !filledWith(p.Input(0), fill) {
		return tri{}, false
	}
	k := int64(0)
	if in := p.Input(1); in != nil {
		ks, ok := in.Ints()
		if !ok || len(ks) != 1 {
			return tri{}, false
		}
		k = ks[0]
	}
	if p.AttrInt("upper", 1) == 0 {
		return tri{off: graph.D(k)}, true
	}
	return tri{off: graph.D(k - 1), neg: true}, true
}

// ramp is a tensor equal to its index along one axis plus an offset;
// axis counts from the right (0: key axis, 1: query axis).
type ramp struct {
	axis int
	off  graph.Dim
}

// rampOf follows Range(start, ·, 1) through Unsqueeze, Reshape, Expand, Cast
// and the addition of a scalar.
func rampOf(v *graph.Value, depth int) (ramp, bool) {
	if v.Const != nil {
		return constRamp(v.Const)
	}
	p := v.Producer()
	if p == nil || depth > 8 {
		return ramp{}, false
	}
	switch {
	case p.Is("Range"):
		start, ok1 := p.Input(0).IntContent()
		if d, ok := p.Input(2).Scalar(); !ok || d != 1 || !ok1 || len(start) != 1 {
			return ramp{}, false
		}
		return ramp{0, start[0]}, true
	case p.Is("Cast") || p.Is("Expand"):
		return rampOf(p.Input(0), depth+1)
	case p.Is("Unsqueeze"):
		r, ok := rampOf(p.Input(0), depth+1)
		in, out := p.Input(0).Type, v.Type
		if !ok || !in.Ranked || !out.Ranked {
			return ramp{}, false
		}
		axes := p.AttrInts("axes")
		if in := p.Input(1); in != nil {
			if axes, ok = in.Ints(); !ok {
				return ramp{}, false
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
			if seen == r.axis {
				return ramp{int(rankOut - 1 - a), r.off}, true
			}
			seen++
		}
		return ramp{}, false
	case p.Is("Reshape"):
		// A ramp viewed with unit axes added or removed around it (a 1-D
		// arange viewed as (1, N), or jax2onnx's (B, N) broadcast viewed as
		// (B, N, 1)): the axes longer than 1 keep their order and sizes.
		r, ok := rampOf(p.Input(0), depth+1)
		if !ok {
			return ramp{}, false
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
			r, ok := rampOf(p.Input(i), depth+1)
			if !ok {
				return ramp{}, false
			}
			if p.Is("Sub") {
				d, ok := dimMinus(r.off, c[0])
				return ramp{r.axis, d}, ok
			}
			return ramp{r.axis, r.off.Add(c[0])}, true
		}
	}
	return ramp{}, false
}

// reshapedRamp follows ramp r of type in through a Reshape to out that only
// adds or removes unit axes.
func reshapedRamp(r ramp, in, out graph.Type) (ramp, bool) {
	if !in.Ranked || !out.Ranked {
		return ramp{}, false
	}
	at := len(in.Shape) - 1 - r.axis
	for o := range out.Shape {
		if i, ok := graph.UnitViewAxis(in.Shape, out.Shape, o); ok && i == at {
			return ramp{len(out.Shape) - 1 - o, r.off}, true
		}
	}
	return ramp{}, false
}

// constRamp reads a constant that counts along its one axis longer than 1
// (a folded arange, as TorchScript and dynamo store them).
func constRamp(c *graph.Tensor) (ramp, bool) {
	axis := -1
	for i, d := range c.Dims {
		if d != 1 {
			if axis >= 0 {
				return ramp{}, false
			}
			axis = i
		}
	}
	if axis < 0 || c.Numel() > maxTriConst {
		return ramp{}, false
	}
	vals, err := c.Float64s()
	if err != nil {
		return ramp{}, false
	}
	for t, x := range vals {
		if x != vals[0]+float64(t) {
			return ramp{}, false
		}
	}
	return ramp{len(c.Dims) - 1 - axis, graph.D(int64(vals[0]))}, true
}

// dimMinus is a − b when it is representable.
func dimMinus(a, b graph.Dim) (graph.Dim, bool) {
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

// compareTri reads a comparison of a query ramp (i + ro) with a key ramp
// (j + co).
func compareTri(p *graph.Node) (tri, bool) {
	a, okA := rampOf(p.Input(0), 0)
	b, okB := rampOf(p.Input(1), 0)
	if !okA || !okB || a.axis == b.axis || a.axis > 1 || b.axis > 1 {
		return tri{}, false
	}
	op := p.OpType
	if a.axis == 1 {
		// Put the key ramp first: row ⋈ col is col ⋈' row.
		a, b = b, a
		op = map[string]string{"Less": "Greater", "LessOrEqual": "GreaterOrEqual", "Greater": "Less", "GreaterOrEqual": "LessOrEqual"}[op]
	}
	// j + co ⋈ i + ro, with d = ro − co.
	d, ok := dimMinus(b.off, a.off)
	if !ok {
		return tri{}, false
	}
	switch op {
	case "LessOrEqual": // j ≤ i + d
		return tri{off: d}, true
	case "Less": // j ≤ i + d − 1
		return tri{off: d.Add(graph.D(-1))}, true
	case "Greater": // j > i + d
		return tri{off: d, neg: true}, true
	case "GreaterOrEqual": // j ≥ i + d: not j ≤ i + d − 1
		return tri{off: d.Add(graph.D(-1)), neg: true}, true
	}
	return tri{}, false
}

// constBand reads a constant whose last two axes keep exactly the keys
// i + lo < j ≤ i + hi (a causal sliding window folded into one constant,
// Gemma 3 under dynamo), the same for every leading index: the causal
// triangle j ≤ i + hi and the band's lower edge, the complement of
// j ≤ i + lo. ok is false when either edge never shows, or the upper one
// is not bottom-right aligned (hi = Nk − Nq).
func constBand(c *graph.Tensor, keep func(float64) bool) (upper, lower tri, ok bool) {
	dims := c.Dims
	if len(dims) < 2 || c.Numel() > maxTriConst || c.Numel() == 0 {
		return tri{}, tri{}, false
	}
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	vals, err := c.Float64s()
	if err != nil {
		return tri{}, tri{}, false
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
		return tri{}, tri{}, false
	}
	plane := rows * cols
	for base := int64(0); base < int64(len(vals)); base += plane {
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				if keep(vals[base+i*cols+j]) != (j <= i+hi && j > i+lo) {
					return tri{}, tri{}, false
				}
			}
		}
	}
	return tri{off: graph.D(hi)}, tri{off: graph.D(lo), neg: true}, true
}

// leafBand reads a constant mask leaf (bool, or a 0/−inf bias) that is a
// causal triangle and a band's lower edge at once.
func leafBand(l maskLeaf) (causal, band tri, ok bool) {
	v := l.v
	for p := v.Producer(); p != nil && keepsPlane(p); p = v.Producer() {
		v = p.Input(0)
	}
	if v.Const == nil {
		return tri{}, tri{}, false
	}
	keep := func(x float64) bool { return (x != 0) != l.inverted }
	if l.bias {
		if !constValues(v.Const, func(x float64) bool { return x == 0 || negInf(x) }) {
			return tri{}, tri{}, false
		}
		keep = func(x float64) bool { return x == 0 }
	}
	return constBand(v.Const, keep)
}
