package graph

// Inference rules for compute ops.

func inferMatMul(c *ictx) {
	a, ok1 := c.shape(0)
	b, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 || len(a) == 0 || len(b) == 0 {
		c.set(0, dt, nil, false)
		return
	}
	c.setShape(0, dt, MatMulShape(a, b))
}

// MatMulShape is numpy matmul's output shape.
func MatMulShape(a, b Shape) Shape {
	va, vb := len(a) == 1, len(b) == 1
	if va {
		a = Shape{D(1), a[0]}
	}
	if vb {
		b = Shape{b[0], D(1)}
	}
	batch := broadcast(a[:len(a)-2], b[:len(b)-2])
	out := append(batch, a[len(a)-2], b[len(b)-1])
	if va {
		out = append(out[:len(out)-2], out[len(out)-1])
	}
	if vb {
		out = out[:len(out)-1]
	}
	return out
}

func inferGemm(c *ictx) {
	a, ok1 := c.shape(0)
	b, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 || len(a) != 2 || len(b) != 2 {
		c.setShape(0, dt, Shape{UnknownDim, UnknownDim})
		return
	}
	m, n := a[0], b[1]
	if c.n.AttrInt("transA", 0) == 1 {
		m = a[1]
	}
	if c.n.AttrInt("transB", 0) == 1 {
		n = b[0]
	}
	c.setShape(0, dt, Shape{m, n})
}

func inferEinsum(c *ictx) {
	dt := c.inType(0).DType
	ranks := make([]int, len(c.n.Inputs))
	for i := range ranks {
		ranks[i] = -1
		if s, ok := c.shape(i); ok {
			ranks[i] = len(s)
		}
	}
	ins, out, err := ParseEinsum(c.n.AttrString("equation", ""), ranks)
	if err != nil {
		c.set(0, dt, nil, false)
		return
	}
	dims := map[rune]Dim{}
	for i, term := range ins {
		s, ok := c.shape(i)
		if !ok || len(s) != len(term) {
			c.set(0, dt, nil, false)
			return
		}
		for j, r := range term {
			if d, seen := dims[r]; !seen || d.Unknown || (d.Static() && d.C == 1) {
				dims[r] = s[j]
			}
		}
	}
	res := make(Shape, 0, len(out))
	for _, r := range out {
		d, seen := dims[r]
		if !seen {
			d = UnknownDim
		}
		res = append(res, d)
	}
	c.setShape(0, dt, res)
}

// convOut computes one spatial output size.
func convOut(in Dim, k, stride, dil, padBegin, padEnd int64, ceil bool) Dim {
	n, ok := in.Value()
	if !ok {
		if k == 1 && stride == 1 && padBegin == 0 && padEnd == 0 {
			return in
		}
		return UnknownDim
	}
	eff := dil*(k-1) + 1
	num := n + padBegin + padEnd - eff
	if num < 0 {
		return D(0)
	}
	if ceil {
		return D((num+stride-1)/stride + 1)
	}
	return D(num/stride + 1)
}

// spatialOut applies kernel/stride/pad/dilation attributes to the spatial
// dims of x, honouring auto_pad.
func (c *ictx) spatialOut(x Shape, kernel []int64, ceil bool) Shape {
	ns := len(x) - 2
	strides := c.n.AttrInts("strides")
	dil := c.n.AttrInts("dilations")
	pads := c.n.AttrInts("pads")
	autoPad := c.n.AttrString("auto_pad", "NOTSET")
	out := make(Shape, ns)
	for i := 0; i < ns; i++ {
		s, d := int64(1), int64(1)
		if i < len(strides) {
			s = strides[i]
		}
		if i < len(dil) {
			d = dil[i]
		}
		var pb, pe int64
		if len(pads) == 2*ns {
			pb, pe = pads[i], pads[i+ns]
		}
		k := int64(1)
		if i < len(kernel) {
			k = kernel[i]
		}
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			if n, ok := x[2+i].Value(); ok {
				out[i] = D((n + s - 1) / s)
			} else {
				out[i] = UnknownDim
			}
		case "VALID":
			out[i] = convOut(x[2+i], k, s, d, 0, 0, false)
		default:
			out[i] = convOut(x[2+i], k, s, d, pb, pe, ceil)
		}
	}
	return out
}

func inferConv(c *ictx) {
	x, ok1 := c.shape(0)
	w, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 || len(x) < 3 || len(w) != len(x) {
		c.set(0, dt, nil, false)
		return
	}
	kernel := c.n.AttrInts("kernel_shape")
	if kernel == nil {
		for _, d := range w[2:] {
			k, ok := d.Value()
			if !ok {
				k = 1
			}
			kernel = append(kernel, k)
		}
	}
	out := append(Shape{x[0], w[0]}, c.spatialOut(x, kernel, false)...)
	c.setShape(0, dt, out)
}

// ConvTranspose (ONNX's formula): each spatial output is
// stride·(in−1) + output_padding + dilation·(k−1) + 1 − pads, or in·stride
// with SAME auto_pad, or output_shape when given; W is (C, M/group, k…).
func inferConvTranspose(c *ictx) {
	x, ok1 := c.shape(0)
	w, ok2 := c.shape(1)
	dt := c.inType(0).DType
	if !ok1 || !ok2 || len(x) < 3 || len(w) != len(x) {
		c.set(0, dt, nil, false)
		return
	}
	ns := len(x) - 2
	at := func(name string, i int, def int64) int64 {
		if xs := c.n.AttrInts(name); i < len(xs) {
			return xs[i]
		}
		return def
	}
	out := Shape{x[0], w[1].Mul(D(c.n.AttrInt("group", 1)))}
	given := c.n.AttrInts("output_shape")
	autoPad := c.n.AttrString("auto_pad", "NOTSET")
	for i := 0; i < ns; i++ {
		if len(given) >= ns {
			out = append(out, D(given[len(given)-ns+i]))
			continue
		}
		n, ok := x[2+i].Value()
		k, okK := w[2+i].Value()
		if kk := at("kernel_shape", i, -1); kk >= 0 {
			k, okK = kk, true
		}
		if !ok || !okK {
			out = append(out, UnknownDim)
			continue
		}
		s := at("strides", i, 1)
		pads := at("pads", i, 0) + at("pads", i+ns, 0)
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out = append(out, D(n*s))
			continue
		case "VALID":
			pads = 0
		}
		out = append(out, D(s*(n-1)+at("output_padding", i, 0)+at("dilations", i, 1)*(k-1)+1-pads))
	}
	c.setShape(0, dt, out)
}

func inferPool(c *ictx) {
	x, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok || len(x) < 3 {
		c.set(0, dt, nil, false)
		return
	}
	out := append(Shape{x[0], x[1]}, c.spatialOut(x, c.n.AttrInts("kernel_shape"), c.n.AttrInt("ceil_mode", 0) == 1)...)
	c.setShape(0, dt, out)
}

func inferGlobalPool(c *ictx) {
	x, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	out := append(Shape(nil), x...)
	for i := 2; i < len(out); i++ {
		out[i] = D(1)
	}
	c.setShape(0, dt, out)
}

func inferResize(c *ictx) {
	x, ok := c.shape(0)
	dt := c.inType(0).DType
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	out := make(Shape, len(x))
	for i := range out {
		out[i] = UnknownDim
	}
	// Upsample(X, scales) and Resize(X, roi, scales, sizes) by opset.
	scalesIdx, sizesIdx := 2, 3
	if c.n.OpType == "Upsample" || c.opset < 11 {
		scalesIdx, sizesIdx = 1, -1
	}
	if sizesIdx > 0 {
		if sizes, ok := c.in(sizesIdx).IntContent(); ok && len(sizes) == len(x) {
			c.setShape(0, dt, Shape(sizes))
			return
		}
	}
	if scales, ok := c.in(scalesIdx).Floats(); ok && len(scales) == len(x) {
		for i := range x {
			if n, ok := x[i].Value(); ok {
				out[i] = D(int64(float64(n) * scales[i]))
			} else if scales[i] == 1 {
				out[i] = x[i]
			}
		}
	}
	c.setShape(0, dt, out)
}

func inferLayerNorm(c *ictx) {
	c.same()
	x, ok := c.shape(0)
	if !ok {
		return
	}
	axis, ok := normAxis(c.n.AttrInt("axis", -1), len(x))
	if !ok {
		return
	}
	stat := append(Shape(nil), x...)
	for i := axis; i < len(stat); i++ {
		stat[i] = D(1)
	}
	c.setShape(1, Float32, stat)
	c.setShape(2, Float32, stat)
}

func inferReduce(c *ictx) {
	x, ok := c.shape(0)
	dt := c.inType(0).DType
	if c.n.OpType == "ArgMax" || c.n.OpType == "ArgMin" {
		dt = Int64
	}
	if !ok {
		c.set(0, dt, nil, false)
		return
	}
	keep := c.n.AttrInt("keepdims", 1) == 1
	var axes []int64
	var has bool
	switch c.n.OpType {
	case "ArgMax", "ArgMin":
		axes, has = []int64{c.n.AttrInt("axis", 0)}, true
	case "ReduceSum":
		axes, has = c.axesOf(13, 1)
	default:
		axes, has = c.axesOf(18, 1)
	}
	if !has && c.in(1) != nil {
		c.set(0, dt, nil, false)
		return
	}
	red := map[int]bool{}
	if len(axes) == 0 {
		if c.n.AttrInt("noop_with_empty_axes", 0) == 1 {
			c.same()
			return
		}
		for i := range x {
			red[i] = true
		}
	}
	for _, a := range axes {
		i, ok := normAxis(a, len(x))
		if !ok {
			return
		}
		red[i] = true
	}
	var out Shape
	for i, d := range x {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, D(1))
		}
	}
	if out == nil {
		out = Shape{}
	}
	c.setShape(0, dt, out)
	// keras2onnx computes reshape targets with ReduceProd of shape slices.
	if c.n.OpType == "ReduceProd" && len(x) == 1 && red[0] {
		if ds, ok := c.in(0).IntContent(); ok {
			p := D(1)
			for _, d := range ds {
				p = p.Mul(d)
			}
			c.out(0).Sym = []Dim{p}
		}
	}
}

func inferArith(c *ictx) {
	var shapes []Shape
	dt := c.inType(0).DType
	ranked := true
	for i, v := range c.n.Inputs {
		if v == nil {
			continue
		}
		s, ok := c.shape(i)
		if !ok {
			ranked = false
			break
		}
		shapes = append(shapes, s)
	}
	if !ranked {
		c.set(0, dt, nil, false)
		return
	}
	c.setShape(0, dt, broadcast(shapes...))
	foldArith(c)
}

func inferCompare(c *ictx) {
	shapes, ok := c.inputsRanked(0, 1)
	if !ok {
		c.set(0, Bool, nil, false)
		return
	}
	c.setShape(0, Bool, broadcast(shapes...))
	foldArith(c)
}

func inferUnary(c *ictx) {
	c.same()
	if len(c.n.Outputs) > 1 && c.n.OpType != "BatchNormalization" && c.n.OpType != "Dropout" {
		return
	}
	foldArith(c)
}
