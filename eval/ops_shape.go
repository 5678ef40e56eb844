package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// take builds a tensor of the given shape whose element k is src's element
// idx[k]; every data-movement op reduces to computing idx.
func take(src *Tensor, shape []int, idx []int) *Tensor {
	out := NewTensor(src.DType, shape)
	switch {
	case src.F != nil:
		for k, i := range idx {
			out.F[k] = src.F[i]
		}
	case src.I != nil:
		for k, i := range idx {
			out.I[k] = src.I[i]
		}
	default:
		for k, i := range idx {
			out.B[k] = src.B[i]
		}
	}
	return out
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(a int64, rank int) (int, error) {
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 || int(a) >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", a, rank)
	}
	return int(a), nil
}

// axesArg reads axes from attribute (old opsets) or input i (new opsets).
func axesArg(c *opCtx, in []*Tensor, i int, inputSince int64) ([]int64, bool) {
	if c.opset >= inputSince {
		if len(in) > i && in[i] != nil {
			return in[i].ints(), true
		}
		return nil, false
	}
	if c.hasAttr("axes") {
		return c.attrInts("axes"), true
	}
	return nil, false
}

func toInts(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

func init() {
	register("", "Identity", func(c *opCtx, in []*Tensor) ([]*Tensor, error) { return []*Tensor{in[0]}, nil })
	register("", "Dropout", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		mask := NewTensor(graph.Bool, in[0].Shape)
		for i := range mask.B {
			mask.B[i] = true
		}
		return []*Tensor{in[0], mask}, nil
	})
	register("", "Cast", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return []*Tensor{castTo(in[0], graph.DType(c.attrInt("to", 1)))}, nil
	})
	register("", "CastLike", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return []*Tensor{castTo(in[0], in[1].DType)}, nil
	})
	register("", "Shape", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		r := len(in[0].Shape)
		start, end := c.attrInt("start", 0), c.attrInt("end", int64(r))
		clampAx := func(a int64) int {
			if a < 0 {
				a += int64(r)
			}
			return int(min(max(a, 0), int64(r)))
		}
		s, e := clampAx(start), clampAx(end)
		var v []int64
		for i := s; i < e; i++ {
			v = append(v, int64(in[0].Shape[i]))
		}
		return []*Tensor{FromInts([]int{len(v)}, v)}, nil
	})
	register("", "Size", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return []*Tensor{FromInts(nil, []int64{int64(in[0].Numel())})}, nil
	})
	register("", "Reshape", opReshape)
	register("", "Flatten", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		ax := int(c.attrInt("axis", 1))
		if ax < 0 {
			ax += len(x.Shape)
		}
		a := numel(x.Shape[:ax])
		return []*Tensor{x.reshaped([]int{a, x.Numel() / max(a, 1)})}, nil
	})
	register("", "Squeeze", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		axes, ok := axesArg(c, in, 1, 13)
		drop := map[int]bool{}
		if ok {
			for _, a := range axes {
				ax, err := normAxis(a, len(x.Shape))
				if err != nil {
					return nil, err
				}
				if x.Shape[ax] != 1 {
					return nil, fmt.Errorf("cannot squeeze axis %d of size %d", ax, x.Shape[ax])
				}
				drop[ax] = true
			}
		} else {
			for i, d := range x.Shape {
				if d == 1 {
					drop[i] = true
				}
			}
		}
		var shape []int
		for i, d := range x.Shape {
			if !drop[i] {
				shape = append(shape, d)
			}
		}
		return []*Tensor{x.reshaped(shape)}, nil
	})
	register("", "Unsqueeze", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		axes, ok := axesArg(c, in, 1, 13)
		if !ok {
			return nil, fmt.Errorf("Unsqueeze needs axes")
		}
		r := len(x.Shape) + len(axes)
		ins := map[int]bool{}
		for _, a := range axes {
			ax, err := normAxis(a, r)
			if err != nil {
				return nil, err
			}
			ins[ax] = true
		}
		shape := make([]int, 0, r)
		j := 0
		for i := 0; i < r; i++ {
			if ins[i] {
				shape = append(shape, 1)
			} else {
				shape = append(shape, x.Shape[j])
				j++
			}
		}
		return []*Tensor{x.reshaped(shape)}, nil
	})
	register("", "Transpose", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		var perm []int
		if p := c.attrInts("perm"); p != nil {
			perm = toInts(p)
		} else {
			for i := len(x.Shape) - 1; i >= 0; i-- {
				perm = append(perm, i)
			}
		}
		return []*Tensor{transpose(x, perm)}, nil
	})
	register("", "Concat", opConcat)
	register("", "Split", opSplit)
	register("", "Slice", opSlice)
	register("", "Gather", opGather)
	register("", "GatherElements", opGatherElements)
	register("", "Expand", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		shape, err := broadcastShapes(in[0].Shape, toInts(in[1].ints()))
		if err != nil {
			return nil, err
		}
		return []*Tensor{expandTo(in[0], shape)}, nil
	})
	register("", "Where", opWhere)
	register("", "ConstantOfShape", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		shape := toInts(in[0].ints())
		var fill *Tensor
		if a := c.node.Attr("value"); a != nil && a.T != nil {
			var err error
			if fill, err = FromGraph(a.T); err != nil {
				return nil, err
			}
		} else {
			fill = FromFloats([]int{1}, []float32{0})
		}
		return []*Tensor{expandTo(fill.reshaped(nil), shape)}, nil
	})
	register("", "Range", opRange)
	register("", "EyeLike", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		if len(x.Shape) != 2 {
			return nil, fmt.Errorf("EyeLike of rank %d, want 2", len(x.Shape))
		}
		dt := x.DType
		if c.hasAttr("dtype") {
			dt = graph.DType(c.attrInt("dtype", 0))
		}
		out := NewTensor(dt, x.Shape)
		k := int(c.attrInt("k", 0))
		for i := 0; i < x.Shape[0]; i++ {
			j := i + k
			if j < 0 || j >= x.Shape[1] {
				continue
			}
			at := i*x.Shape[1] + j
			switch {
			case out.F != nil:
				out.F[at] = 1
			case out.I != nil:
				out.I[at] = 1
			default:
				out.B[at] = true
			}
		}
		return []*Tensor{out}, nil
	})
	register("", "Tile", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		reps := toInts(in[1].ints())
		shape := make([]int, len(x.Shape))
		for i := range shape {
			shape[i] = x.Shape[i] * reps[i]
		}
		st := contiguousStrides(x.Shape)
		idx := make([]int, numel(shape))
		forIndex(shape, func(k int, ix []int) {
			off := 0
			for a, v := range ix {
				off += (v % x.Shape[a]) * st[a]
			}
			idx[k] = off
		})
		return []*Tensor{take(x, shape, idx)}, nil
	})
	register("", "Pad", opPad)
	register("", "Trilu", opTrilu)
	register("", "CumSum", opCumSum)
	register("", "ScatterND", opScatterND)
	register("", "NonZero", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		r := len(x.Shape)
		var hits [][]int
		forIndex(x.Shape, func(k int, ix []int) {
			if x.Float64At(k) != 0 {
				hits = append(hits, append([]int{}, ix...))
			}
		})
		out := NewTensor(graph.Int64, []int{r, len(hits)})
		for j, h := range hits {
			for a := 0; a < r; a++ {
				out.I[a*len(hits)+j] = int64(h[a])
			}
		}
		return []*Tensor{out}, nil
	})
}

// forIndex visits every multi-index of shape in row-major order.
func forIndex(shape []int, fn func(k int, ix []int)) {
	n := numel(shape)
	ix := make([]int, len(shape))
	for k := 0; k < n; k++ {
		fn(k, ix)
		for a := len(shape) - 1; a >= 0; a-- {
			ix[a]++
			if ix[a] < shape[a] {
				break
			}
			ix[a] = 0
		}
	}
}

func castTo(x *Tensor, to graph.DType) *Tensor {
	out := NewTensor(to, x.Shape)
	switch storageOf(to) {
	case stFloat:
		if x.F != nil {
			copy(out.F, x.F)
		} else {
			for i := range out.F {
				out.F[i] = float32(x.Float64At(i))
			}
		}
	case stInt:
		switch {
		case x.I != nil:
			copy(out.I, x.I)
		case x.F != nil:
			for i, v := range x.F {
				f := float64(v)
				if math.IsNaN(f) {
					out.I[i] = 0
				} else {
					out.I[i] = int64(f)
				}
			}
		default:
			for i, v := range x.B {
				if v {
					out.I[i] = 1
				}
			}
		}
	default:
		for i := range out.B {
			out.B[i] = x.Float64At(i) != 0
		}
	}
	return out
}

func opReshape(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	var target []int64
	if c.opset < 5 {
		target = c.attrInts("shape")
	} else {
		target = in[1].ints()
	}
	allowZero := c.attrInt("allowzero", 0) != 0
	shape := make([]int, len(target))
	neg := -1
	known := 1
	for i, d := range target {
		switch {
		case d == 0 && !allowZero:
			if i >= len(x.Shape) {
				return nil, fmt.Errorf("reshape: 0 at %d copies a dim the input lacks", i)
			}
			shape[i] = x.Shape[i]
		case d == -1:
			if neg >= 0 {
				return nil, fmt.Errorf("reshape: two -1 in %v", target)
			}
			neg = i
			continue
		default:
			shape[i] = int(d)
		}
		known *= shape[i]
	}
	n := x.Numel()
	if neg >= 0 {
		if known == 0 || n%known != 0 {
			return nil, fmt.Errorf("reshape %v to %v: sizes do not divide", x.Shape, target)
		}
		shape[neg] = n / known
	} else if known != n {
		return nil, fmt.Errorf("reshape %v (%d elements) to %v", x.Shape, n, shape)
	}
	return []*Tensor{x.reshaped(shape)}, nil
}

// transpose permutes axes: output axis i is input axis perm[i].
func transpose(x *Tensor, perm []int) *Tensor {
	r := len(x.Shape)
	shape := make([]int, r)
	st := contiguousStrides(x.Shape)
	pst := make([]int, r)
	for i, p := range perm {
		shape[i] = x.Shape[p]
		pst[i] = st[p]
	}
	// copy straight through the permuted strides: no index buffer, so
	// large activations cost only their output
	out := NewTensor(x.DType, shape)
	zero := make([]int, r)
	switch {
	case x.F != nil:
		gatherF32(out.F, x.F, shape, pst)
	case x.I != nil:
		walk2(shape, pst, zero, func(o, a, _ int) { out.I[o] = x.I[a] })
	default:
		walk2(shape, pst, zero, func(o, a, _ int) { out.B[o] = x.B[a] })
	}
	return out
}

func opConcat(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	var parts []*Tensor
	for _, t := range in {
		if t != nil {
			parts = append(parts, t)
		}
	}
	first := parts[0]
	ax, err := normAxis(c.attrInt("axis", 0), len(first.Shape))
	if err != nil {
		return nil, err
	}
	shape := append([]int{}, first.Shape...)
	shape[ax] = 0
	for _, p := range parts {
		if len(p.Shape) != len(shape) {
			return nil, fmt.Errorf("concat of ranks %d and %d", len(first.Shape), len(p.Shape))
		}
		shape[ax] += p.Shape[ax]
	}
	out := NewTensor(first.DType, shape)
	outer := numel(shape[:ax])
	inner := numel(shape[ax+1:])
	off := 0
	for _, p := range parts {
		blk := p.Shape[ax] * inner
		for o := 0; o < outer; o++ {
			dst := o*shape[ax]*inner + off
			switch {
			case out.F != nil:
				copy(out.F[dst:dst+blk], p.F[o*blk:(o+1)*blk])
			case out.I != nil:
				copy(out.I[dst:dst+blk], p.I[o*blk:(o+1)*blk])
			default:
				copy(out.B[dst:dst+blk], p.B[o*blk:(o+1)*blk])
			}
		}
		off += blk
	}
	return []*Tensor{out}, nil
}

// sliceAxis copies [start, start+len) along axis ax.
func sliceAxis(x *Tensor, ax, start, length int) *Tensor {
	shape := append([]int{}, x.Shape...)
	shape[ax] = length
	outer := numel(x.Shape[:ax])
	inner := numel(x.Shape[ax+1:])
	out := NewTensor(x.DType, shape)
	for o := 0; o < outer; o++ {
		src := (o*x.Shape[ax] + start) * inner
		dst := o * length * inner
		n := length * inner
		switch {
		case x.F != nil:
			copy(out.F[dst:dst+n], x.F[src:src+n])
		case x.I != nil:
			copy(out.I[dst:dst+n], x.I[src:src+n])
		default:
			copy(out.B[dst:dst+n], x.B[src:src+n])
		}
	}
	return out
}

func opSplit(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	ax, err := normAxis(c.attrInt("axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	var sizes []int
	if c.opset >= 13 {
		if len(in) > 1 && in[1] != nil {
			sizes = toInts(in[1].ints())
		}
	} else if s := c.attrInts("split"); s != nil {
		sizes = toInts(s)
	}
	nOut := len(c.node.Outputs)
	if sizes == nil {
		if k := c.attrInt("num_outputs", 0); k > 0 {
			nOut = int(k)
		}
		d := x.Shape[ax]
		chunk := (d + nOut - 1) / nOut
		for rest := d; len(sizes) < nOut; rest -= chunk {
			sizes = append(sizes, min(chunk, rest))
		}
	}
	var outs []*Tensor
	start := 0
	for _, s := range sizes {
		outs = append(outs, sliceAxis(x, ax, start, s))
		start += s
	}
	if start != x.Shape[ax] {
		return nil, fmt.Errorf("split sizes %v do not sum to %d", sizes, x.Shape[ax])
	}
	return outs, nil
}

func opSlice(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	r := len(x.Shape)
	var starts, ends, axes, steps []int64
	if c.opset < 10 {
		starts, ends, axes = c.attrInts("starts"), c.attrInts("ends"), c.attrInts("axes")
	} else {
		starts, ends = in[1].ints(), in[2].ints()
		if len(in) > 3 && in[3] != nil {
			axes = in[3].ints()
		}
		if len(in) > 4 && in[4] != nil {
			steps = in[4].ints()
		}
	}
	st := make([]int, r)
	step := make([]int, r)
	shape := append([]int{}, x.Shape...)
	for i := range step {
		step[i] = 1
	}
	for i := range starts {
		ax := i
		if axes != nil {
			var err error
			if ax, err = normAxis(axes[i], r); err != nil {
				return nil, err
			}
		}
		d := int64(x.Shape[ax])
		s, e, k := starts[i], ends[i], int64(1)
		if steps != nil {
			k = steps[i]
		}
		if k == 0 {
			return nil, fmt.Errorf("slice step 0")
		}
		if s < 0 {
			s += d
		}
		if e < 0 {
			e += d
		}
		if k > 0 {
			s = min(max(s, 0), d)
			e = min(max(e, 0), d)
		} else {
			s = min(max(s, -1), d-1)
			e = min(max(e, -1), d-1)
		}
		n := int64(0)
		if k > 0 && e > s {
			n = (e - s + k - 1) / k
		} else if k < 0 && s > e {
			n = (s - e + (-k) - 1) / (-k)
		}
		st[ax], step[ax], shape[ax] = int(s), int(k), int(n)
	}
	cs := contiguousStrides(x.Shape)
	base := 0
	stride := make([]int, r)
	for a := range stride {
		base += st[a] * cs[a]
		stride[a] = step[a] * cs[a]
	}
	idx := make([]int, numel(shape))
	walk2(shape, stride, make([]int, r), func(o, a, _ int) { idx[o] = base + a })
	return []*Tensor{take(x, shape, idx)}, nil
}
