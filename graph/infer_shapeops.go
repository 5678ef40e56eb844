package graph

// Inference rules for the ops of shape arithmetic and data movement.

func inferConstant(c *ictx) {
	var t *Tensor
	for _, a := range c.n.Attrs {
		switch a.Name {
		case "value":
			t = a.T
		case "value_float":
			t = NewFloatTensor("", nil, []float32{a.F})
		case "value_floats":
			t = NewFloatTensor("", []int64{int64(len(a.Floats))}, a.Floats)
		case "value_int":
			t = NewInt64Tensor("", nil, []int64{a.I})
		case "value_ints":
			t = NewInt64Tensor("", []int64{int64(len(a.Ints))}, a.Ints)
		}
	}
	if t == nil {
		return
	}
	o := c.out(0)
	o.Const = t
	c.setShape(0, t.DType, StaticShape(t.Dims...))
}

func inferCast(c *ictx) {
	to := DType(c.n.AttrInt("to", 0))
	s, r := c.shape(0)
	c.set(0, to, s, r)
	castContent(c.in(0), c.out(0), to)
}

func inferCastLike(c *ictx) {
	to := c.inType(1).DType
	s, r := c.shape(0)
	c.set(0, to, s, r)
	castContent(c.in(0), c.out(0), to)
}

func castContent(in, out *Value, to DType) {
	if in == nil || out == nil {
		return
	}
	if to.IsInt() {
		if ds, ok := in.IntContent(); ok {
			out.Sym = ds
			return
		}
		if f, ok := in.Floats(); ok {
			ds := make([]Dim, len(f))
			for i, x := range f {
				ds[i] = D(int64(x))
			}
			out.Sym = ds
		}
		return
	}
	if f, ok := in.Floats(); ok {
		if raw, ok := EncodeFloats(to, f); ok {
			out.Const = NewTensor("", to, shapeDims(in), raw)
		}
	}
}

func shapeDims(v *Value) []int64 {
	if xs, ok := v.Type.Shape.Ints(); ok && v.Type.Ranked {
		return xs
	}
	if v.Const != nil {
		return v.Const.Dims
	}
	if v.Sym != nil {
		return []int64{int64(len(v.Sym))}
	}
	return nil
}

func inferShapeOp(c *ictx) {
	s, ok := c.shape(0)
	if !ok {
		c.set(0, Int64, Shape{UnknownDim}, true)
		return
	}
	start, end := 0, len(s)
	if a := c.n.Attr("start"); a != nil {
		if x, ok := clampAxis(a.I, len(s)); ok {
			start = x
		}
	}
	if a := c.n.Attr("end"); a != nil {
		if x, ok := clampAxis(a.I, len(s)); ok {
			end = x
		}
	}
	if end < start {
		end = start
	}
	dims := append([]Dim(nil), s[start:end]...)
	c.setShape(0, Int64, StaticShape(int64(len(dims))))
	c.out(0).Sym = dims
}

func clampAxis(a int64, rank int) (int, bool) {
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 {
		a = 0
	}
	if a > int64(rank) {
		a = int64(rank)
	}
	return int(a), true
}

func inferSize(c *ictx) {
	c.setShape(0, Int64, Shape{})
	if s, ok := c.shape(0); ok {
		c.out(0).Sym = []Dim{s.Numel()}
	}
}

func inferGather(c *ictx) {
	data, ok1 := c.shape(0)
	idx, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 {
		c.set(0, dt, nil, false)
		return
	}
	axis, ok := normAxis(c.n.AttrInt("axis", 0), len(data))
	if !ok {
		return
	}
	out := append(append(append(Shape(nil), data[:axis]...), idx...), data[axis+1:]...)
	c.setShape(0, dt, out)
	// Content: gathering from a 1-D shape vector.
	content, ok := c.in(0).IntContent()
	ids, ok2 := c.in(1).Ints()
	if ok && ok2 && len(data) == 1 {
		var res []Dim
		for _, i := range ids {
			if i < 0 {
				i += int64(len(content))
			}
			if i < 0 || i >= int64(len(content)) {
				return
			}
			res = append(res, content[i])
		}
		c.out(0).Sym = res
	}
}

func inferUnsqueeze(c *ictx) {
	s, ok := c.shape(0)
	axes, ok2 := c.axesOf(13, 1)
	dt := c.inType(0).DType
	if !ok || !ok2 {
		c.set(0, dt, nil, false)
		return
	}
	rank := len(s) + len(axes)
	ins := map[int]bool{}
	for _, a := range axes {
		x, ok := normAxis(a, rank)
		if !ok {
			return
		}
		ins[x] = true
	}
	out := make(Shape, 0, rank)
	j := 0
	for i := 0; i < rank; i++ {
		if ins[i] {
			out = append(out, D(1))
		} else if j < len(s) {
			out = append(out, s[j])
			j++
		}
	}
	c.setShape(0, dt, out)
	if ds, ok := c.in(0).IntContent(); ok {
		c.out(0).Sym = ds
	}
}

func inferSqueeze(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	axes, has := c.axesOf(13, 1)
	drop := map[int]bool{}
	if has && len(axes) > 0 {
		for _, a := range axes {
			x, ok := normAxis(a, len(s))
			if !ok {
				return
			}
			drop[x] = true
		}
	} else {
		for i, d := range s {
			if d.Static() && d.C == 1 {
				drop[i] = true
			} else if !d.Static() {
				c.set(0, dt, nil, false)
				return
			}
		}
	}
	var out Shape
	for i, d := range s {
		if !drop[i] {
			out = append(out, d)
		}
	}
	if out == nil {
		out = Shape{}
	}
	c.setShape(0, dt, out)
	if ds, ok := c.in(0).IntContent(); ok {
		c.out(0).Sym = ds
	}
}

func inferConcat(c *ictx) {
	var shapes []Shape
	dt := Undefined
	for i, v := range c.n.Inputs {
		if v == nil {
			continue
		}
		if dt == Undefined {
			dt = v.Type.DType
		}
		s, ok := c.shape(i)
		if !ok {
			c.set(0, dt, nil, false)
			return
		}
		shapes = append(shapes, s)
	}
	if len(shapes) == 0 {
		return
	}
	rank := len(shapes[0])
	axis, ok := normAxis(c.n.AttrInt("axis", 0), rank)
	if !ok {
		return
	}
	out := append(Shape(nil), shapes[0]...)
	for _, s := range shapes[1:] {
		if len(s) != rank {
			return
		}
		out[axis] = out[axis].Add(s[axis])
		for i := range out {
			if i != axis && out[i].Unknown {
				out[i] = s[i]
			}
		}
	}
	c.setShape(0, dt, out)
	if rank == 1 {
		var res []Dim
		for _, v := range c.n.Inputs {
			if v == nil {
				continue
			}
			ds, ok := v.IntContent()
			if !ok {
				return
			}
			res = append(res, ds...)
		}
		c.out(0).Sym = res
	}
}

// sliceParams reads starts/ends/axes/steps from attributes (opset < 10) or
// inputs.
func (c *ictx) sliceParams(rank int) (starts, ends, axes, steps []int64, ok bool) {
	if c.opset < 10 {
		starts, ends, axes = c.n.AttrInts("starts"), c.n.AttrInts("ends"), c.n.AttrInts("axes")
	} else {
		var ok1, ok2 bool
		starts, ok1 = c.in(1).Ints()
		ends, ok2 = c.in(2).Ints()
		if !ok1 || !ok2 {
			return nil, nil, nil, nil, false
		}
		if v := c.in(3); v != nil {
			if axes, ok = v.Ints(); !ok {
				return nil, nil, nil, nil, false
			}
		}
		if v := c.in(4); v != nil {
			if steps, ok = v.Ints(); !ok {
				return nil, nil, nil, nil, false
			}
		}
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if steps == nil {
		for range starts {
			steps = append(steps, 1)
		}
	}
	if len(starts) != len(ends) || len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, nil, nil, nil, false
	}
	return starts, ends, axes, steps, true
}

// sliceRange resolves one axis's start/end/step against a dim size.
func sliceRange(start, end, step, n int64) (lo, count int64) {
	clamp := func(x, lo, hi int64) int64 {
		if x < lo {
			return lo
		}
		if x > hi {
			return hi
		}
		return x
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if step > 0 {
		start, end = clamp(start, 0, n), clamp(end, 0, n)
		if end <= start {
			return start, 0
		}
		return start, (end - start + step - 1) / step
	}
	start, end = clamp(start, -1, n-1), clamp(end, -1, n-1)
	if end >= start {
		return start, 0
	}
	return start, (start - end - step - 1) / (-step)
}

func inferSlice(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	starts, ends, axes, steps, ok := c.sliceParams(len(s))
	out := append(Shape(nil), s...)
	if !ok && prefixSliceShape(c, s, out) {
		c.setShape(0, dt, out)
		return
	}
	if !ok {
		for i := range out {
			out[i] = UnknownDim
		}
		c.setShape(0, dt, out)
		return
	}
	content, hasContent := c.in(0).IntContent()
	for k, a := range axes {
		ax, ok := normAxis(a, len(s))
		if !ok || steps[k] == 0 {
			return
		}
		n, known := s[ax].Value()
		if !known {
			// x[a:] with a symbolic length stays symbolic only when the slice
			// keeps everything.
			if starts[k] == 0 && ends[k] >= 1<<31 && steps[k] == 1 {
				continue
			}
			out[ax] = UnknownDim
			hasContent = false
			continue
		}
		lo, cnt := sliceRange(starts[k], ends[k], steps[k], n)
		out[ax] = D(cnt)
		if hasContent && len(s) == 1 {
			res := make([]Dim, 0, cnt) // empty, not nil: a known empty vector
			for i := int64(0); i < cnt; i++ {
				res = append(res, content[lo+i*steps[k]])
			}
			content = res
		}
	}
	c.setShape(0, dt, out)
	if hasContent && len(s) == 1 {
		c.out(0).Sym = content
	} else if len(s) > 1 {
		sliceContentND(c.in(0), c.out(0), s, starts, axes, steps)
	}
}

// prefixSliceShape reads x[:e] along axes whose end e is a dim computed at
// run time (transformers' attention_mask[:, :, :, : key.shape[-2]] in an
// export): starts 0 and steps 1 known, ends known symbolically. An axis
// whose end is its own length keeps it; any other end leaves it unknown.
// It fills out (x's shape) and says whether the slice had that form.
func prefixSliceShape(c *ictx, s, out Shape) bool {
	if c.opset < 10 {
		return false
	}
	starts, ok1 := c.in(1).Ints()
	ends, ok2 := c.in(2).IntContent()
	if !ok1 || !ok2 || len(starts) != len(ends) {
		return false
	}
	axes := make([]int64, len(starts))
	for i := range axes {
		axes[i] = int64(i)
	}
	if v := c.in(3); v != nil {
		a, ok := v.Ints()
		if !ok || len(a) != len(starts) {
			return false
		}
		axes = a
	}
	if v := c.in(4); v != nil {
		st, ok := v.Ints()
		if !ok || len(st) != len(starts) {
			return false
		}
		for _, x := range st {
			if x != 1 {
				return false
			}
		}
	}
	for k, a := range axes {
		ax, ok := normAxis(a, len(s))
		if !ok || starts[k] != 0 {
			return false
		}
		if !ends[k].Equal(s[ax]) {
			out[ax] = UnknownDim
		}
	}
	return true
}

// sliceContentND slices the known content of a small multi-dimensional
// integer tensor (exporters reverse (r, 2) pad tables with step -1).
func sliceContentND(in, out *Value, inShape Shape, starts, axes, steps []int64) {
	content, ok := in.IntContent()
	dims, ok2 := inShape.Ints()
	outDims, ok3 := out.Type.Shape.Ints()
	if !ok || !ok2 || !ok3 || int64(len(content)) != numel(dims) {
		return
	}
	lo := make([]int64, len(dims))
	step := make([]int64, len(dims))
	for i := range step {
		step[i] = 1
	}
	for k, a := range axes {
		ax, ok := normAxis(a, len(dims))
		if !ok {
			return
		}
		// Only the clamped start matters here; the output dims give counts.
		if steps[k] > 0 {
			lo[ax], _ = sliceRange(starts[k], dims[ax], steps[k], dims[ax])
		} else {
			lo[ax], _ = sliceRange(starts[k], -dims[ax]-1, steps[k], dims[ax])
		}
		step[ax] = steps[k]
	}
	n := numel(outDims)
	res := make([]Dim, n)
	idx := make([]int64, len(dims))
	for k := int64(0); k < n; k++ {
		rem := k
		for ax := len(outDims) - 1; ax >= 0; ax-- {
			idx[ax] = rem % outDims[ax]
			rem /= outDims[ax]
		}
		src := int64(0)
		for ax, d := range dims {
			src = src*d + lo[ax] + idx[ax]*step[ax]
		}
		if src < 0 || src >= int64(len(content)) {
			return
		}
		res[k] = content[src]
	}
	out.Sym = res
}

func inferReshape(c *ictx) {
	dt := c.inType(0).DType
	var target []Dim
	var ok bool
	if c.opset < 5 {
		for _, x := range c.n.AttrInts("shape") {
			target = append(target, D(x))
		}
		ok = c.n.Attr("shape") != nil
	} else {
		target, ok = c.in(1).IntContent()
	}
	if !ok {
		c.setRankFromShapeInput(1, dt)
		return
	}
	in, ranked := c.shape(0)
	allowZero := c.n.AttrInt("allowzero", 0) == 1
	out := make(Shape, len(target))
	neg := -1
	known := D(1)
	for i, d := range target {
		switch {
		case d.Static() && d.C == 0 && !allowZero:
			if !ranked || i >= len(in) {
				out[i] = UnknownDim
			} else {
				out[i] = in[i]
			}
		case d.Static() && d.C == -1:
			neg = i
			continue
		default:
			out[i] = d
		}
		known = known.Mul(out[i])
	}
	if neg >= 0 {
		out[neg] = UnknownDim
		if ranked {
			if q, ok := in.Numel().Div(known); ok {
				out[neg] = q
			}
		}
	}
	c.setShape(0, dt, out)
	if ds, ok := c.in(0).IntContent(); ok {
		c.out(0).Sym = ds
	}
}

func inferTranspose(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	perm := c.n.AttrInts("perm")
	if perm == nil {
		for i := len(s) - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != len(s) {
		return
	}
	out := make(Shape, len(s))
	for i, p := range perm {
		if p < 0 || int(p) >= len(s) {
			return
		}
		out[i] = s[p]
	}
	c.setShape(0, dt, out)
	transposeContent(c.in(0), c.out(0), perm)
}

// transposeContent permutes the known content of a small integer tensor
// (pad vectors are built as (2, r) tensors and transposed).
func transposeContent(in, out *Value, perm []int64) {
	content, ok := in.IntContent()
	dims, ok2 := in.Type.Shape.Ints()
	if !ok || !ok2 || int64(len(content)) != numel(dims) {
		return
	}
	outDims := make([]int64, len(perm))
	for i, p := range perm {
		outDims[i] = dims[p]
	}
	res := make([]Dim, len(content))
	idx := make([]int64, len(dims))
	for k := range res {
		rem := int64(k)
		for ax := len(outDims) - 1; ax >= 0; ax-- {
			idx[perm[ax]] = rem % outDims[ax]
			rem /= outDims[ax]
		}
		src := int64(0)
		for ax, d := range dims {
			src = src*d + idx[ax]
		}
		res[k] = content[src]
	}
	out.Sym = res
}

func inferFlatten(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.setShape(0, dt, Shape{UnknownDim, UnknownDim})
		return
	}
	axis := c.n.AttrInt("axis", 1)
	if axis < 0 {
		axis += int64(len(s))
	}
	if axis < 0 || axis > int64(len(s)) {
		return
	}
	c.setShape(0, dt, Shape{s[:axis].Numel(), s[axis:].Numel()})
}

func inferSplit(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	nout := len(c.n.Outputs)
	if !ok {
		for i := 0; i < nout; i++ {
			c.set(i, dt, nil, false)
		}
		return
	}
	axis, ok := normAxis(c.n.AttrInt("axis", 0), len(s))
	if !ok {
		return
	}
	var sizes []int64
	if c.opset < 13 {
		sizes = c.n.AttrInts("split")
	} else if v := c.in(1); v != nil {
		sizes, _ = v.Ints()
	}
	n, known := s[axis].Value()
	if sizes == nil && known && nout > 0 {
		chunk := (n + int64(nout) - 1) / int64(nout)
		for i := 0; i < nout; i++ {
			sz := chunk
			if rest := n - int64(i)*chunk; rest < chunk {
				sz = rest
			}
			sizes = append(sizes, sz)
		}
	}
	for i := 0; i < nout; i++ {
		out := append(Shape(nil), s...)
		if i < len(sizes) {
			out[axis] = D(sizes[i])
		} else if sizes == nil && nout == 1 {
			out[axis] = s[axis]
		} else if d, ok := s[axis].Div(D(int64(nout))); ok && sizes == nil {
			out[axis] = d
		} else {
			out[axis] = UnknownDim
		}
		c.setShape(i, dt, out)
	}
}

func inferExpand(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	target, ok2 := c.in(1).IntContent()
	if ok && !ok2 {
		// Unknown target values of known length still fix the rank.
		if ts, r := c.shape(1); r && len(ts) == 1 {
			if k, known := ts[0].Value(); known {
				out := make(Shape, max(int(k), len(s)))
				for i := range out {
					out[i] = UnknownDim
				}
				c.setShape(0, dt, out)
				return
			}
		}
	}
	if !ok || !ok2 {
		c.set(0, dt, nil, false)
		return
	}
	// -1 entries in a target never occur; 1 keeps the input's dim.
	c.setShape(0, dt, broadcast(s, Shape(target)))
}

func inferWhere(c *ictx) {
	shapes, ok := c.inputsRanked(0, 1, 2)
	dt := c.inType(1).DType
	if dt == Undefined {
		dt = c.inType(2).DType
	}
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	c.setShape(0, dt, broadcast(shapes...))
	foldWhere(c)
}

func inferConstantOfShape(c *ictx) {
	target, ok := c.in(0).IntContent()
	dt := Float32
	var fill float64
	if a := c.n.Attr("value"); a != nil && a.T != nil {
		dt = a.T.DType
		if f, err := a.T.Float64s(); err == nil && len(f) == 1 {
			fill = f[0]
		}
	}
	if !ok {
		c.setRankFromShapeInput(0, dt)
		return
	}
	c.setShape(0, dt, Shape(target))
	if dims, ok := Shape(target).Ints(); ok {
		if n := numel(dims); n >= 0 && n <= maxFold {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = fill
			}
			if raw, ok := EncodeFloats(dt, vals); ok {
				c.out(0).Const = NewTensor("", dt, dims, raw)
			}
		}
	}
}

// inferEyeLike: the input's 2-D shape, ones on diagonal k (XLNet builds its
// mask's diagonal with it), folded when the shape is known and small.
func inferEyeLike(c *ictx) {
	dt := c.inType(0).DType
	if a := c.n.Attr("dtype"); a != nil {
		dt = DType(c.n.AttrInt("dtype", 0))
	}
	s, ok := c.shape(0)
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	c.setShape(0, dt, s)
	dims, ok := s.Ints()
	if !ok || len(dims) != 2 || numel(dims) > maxFold {
		return
	}
	k := c.n.AttrInt("k", 0)
	vals := make([]float64, numel(dims))
	for i := int64(0); i < dims[0]; i++ {
		if j := i + k; j >= 0 && j < dims[1] {
			vals[i*dims[1]+j] = 1
		}
	}
	if raw, ok := EncodeFloats(dt, vals); ok {
		c.out(0).Const = NewTensor("", dt, dims, raw)
	}
}

// inferTopK: values and int64 indices of the input's shape with k along
// the axis (Informer's ProbSparse picks its top queries with it).
func inferTopK(c *ictx) {
	t := c.inType(0)
	s, ok := c.shape(0)
	if !ok {
		c.set(0, t.DType, nil, false)
		c.set(1, Int64, nil, false)
		return
	}
	out := append(Shape(nil), s...)
	if ax, ok := normAxis(c.n.AttrInt("axis", -1), len(s)); ok {
		out[ax] = UnknownDim
		if k, ok := c.in(1).IntContent(); ok && len(k) == 1 {
			out[ax] = k[0]
		}
	}
	c.setShape(0, t.DType, out)
	c.setShape(1, Int64, append(Shape(nil), out...))
}

// inferRandomLike: the input's shape, in the dtype attribute's type or the
// input's.
func inferRandomLike(c *ictx) {
	t := c.inType(0)
	dt := t.DType
	if c.n.Attr("dtype") != nil {
		dt = DType(c.n.AttrInt("dtype", 0))
	}
	c.set(0, dt, append(Shape(nil), t.Shape...), t.Ranked)
}

func inferRange(c *ictx) {
	dt := c.inType(0).DType
	start, ok1 := c.in(0).Scalar()
	limit, ok2 := c.in(1).Scalar()
	delta, ok3 := c.in(2).Scalar()
	if !ok1 || !ok2 || !ok3 || delta == 0 {
		// arange(n) of a symbolic n (a sequence length read from a shape)
		// has n elements.
		if l, ok := c.in(1).IntContent(); ok && ok1 && ok3 && start == 0 && delta == 1 && len(l) == 1 {
			c.setShape(0, dt, Shape{l[0]})
			return
		}
		// arange(past, past + n) (the query positions after a KV cache) has n.
		s, okS := c.in(0).IntContent()
		l, okL := c.in(1).IntContent()
		if okS && okL && ok3 && delta == 1 && len(s) == 1 && len(l) == 1 {
			if n, ok := l[0].Sub(s[0]); ok {
				c.setShape(0, dt, Shape{n})
				return
			}
		}
		c.setShape(0, dt, Shape{UnknownDim})
		return
	}
	n := int64((limit - start + delta - sign(delta)) / delta)
	if dt.IsFloat() {
		n = int64(ceilDiv(limit-start, delta))
	}
	if n < 0 {
		n = 0
	}
	c.setShape(0, dt, StaticShape(n))
	if n <= maxFold {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = start + float64(i)*delta
		}
		if dt.IsInt() {
			ds := make([]Dim, n)
			for i, x := range vals {
				ds[i] = D(int64(x))
			}
			c.out(0).Sym = ds
		} else if raw, ok := EncodeFloats(dt, vals); ok {
			c.out(0).Const = NewTensor("", dt, []int64{n}, raw)
		}
	}
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

func ceilDiv(a, b float64) float64 {
	q := a / b
	if q != float64(int64(q)) && q > 0 {
		return float64(int64(q) + 1)
	}
	return float64(int64(q))
}

func inferTile(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	reps, ok2 := c.in(1).IntContent()
	if !ok || !ok2 || len(reps) != len(s) {
		c.set(0, dt, nil, ok && len(s) > 0)
		if ok {
			out := make(Shape, len(s))
			for i := range out {
				out[i] = UnknownDim
			}
			c.setShape(0, dt, out)
		}
		return
	}
	out := make(Shape, len(s))
	for i := range s {
		out[i] = s[i].Mul(reps[i])
	}
	c.setShape(0, dt, out)
}

func inferPad(c *ictx) {
	s, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	var pads []int64
	if c.opset < 11 {
		pads = c.n.AttrInts("pads")
	} else {
		pads, ok = c.in(1).Ints()
	}
	out := make(Shape, len(s))
	if !ok || c.in(3) != nil || len(pads) != 2*len(s) {
		for i := range out {
			out[i] = UnknownDim
		}
	} else {
		for i := range s {
			out[i] = s[i].Add(D(pads[i] + pads[i+len(s)]))
		}
	}
	c.setShape(0, dt, out)
}

// setRankFromShapeInput handles an output shape given by a 1-D input whose
// values are unknown but whose length is: the rank is known, every dim not.
func (c *ictx) setRankFromShapeInput(i int, dt DType) {
	if s, r := c.shape(i); r && len(s) == 1 {
		if k, ok := s[0].Value(); ok {
			out := make(Shape, k)
			for j := range out {
				out[j] = UnknownDim
			}
			c.setShape(0, dt, out)
			return
		}
	}
	c.set(0, dt, nil, false)
}
