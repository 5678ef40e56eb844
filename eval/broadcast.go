package eval

import "fmt"

// broadcastShapes applies numpy (right-aligned) broadcasting.
func broadcastShapes(shapes ...[]int) ([]int, error) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case d == o || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast", shapes)
			}
		}
	}
	return out, nil
}

// contiguousStrides gives row-major element strides.
func contiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// bcastStrides are the strides that read in as if it had shape out: 0 along
// broadcast (size-1 or missing) axes. Used to read masks without expanding.
func bcastStrides(in, out []int) []int {
	st := make([]int, len(out))
	cs := contiguousStrides(in)
	off := len(out) - len(in)
	for i, d := range in {
		if d != 1 {
			st[off+i] = cs[i]
		}
	}
	return st
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// walk visits every index of shape out with the matching offsets of inputs
// read through strides st[k]; fn gets the output offset and an offsets slice
// (reused between calls). The innermost axis is a plain loop.
func walk(out []int, st [][]int, fn func(o int, offs []int)) {
	n := numel(out)
	offs := make([]int, len(st))
	if n == 0 {
		return
	}
	r := len(out)
	if r == 0 {
		fn(0, offs)
		return
	}
	idx := make([]int, r)
	base := make([]int, len(st))
	inner := out[r-1]
	o := 0
	for {
		for i := 0; i < inner; i++ {
			for k := range st {
				offs[k] = base[k] + i*st[k][r-1]
			}
			fn(o, offs)
			o++
		}
		// advance the odometer over the outer axes
		ax := r - 2
		for ; ax >= 0; ax-- {
			idx[ax]++
			for k := range st {
				base[k] += st[k][ax]
			}
			if idx[ax] < out[ax] {
				break
			}
			for k := range st {
				base[k] -= st[k][ax] * out[ax]
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return
		}
	}
}

// walk2 is walk for two inputs without the slice indirection.
func walk2(out, sa, sb []int, fn func(o, a, b int)) {
	n := numel(out)
	if n == 0 {
		return
	}
	r := len(out)
	if r == 0 {
		fn(0, 0, 0)
		return
	}
	idx := make([]int, r)
	ba, bb := 0, 0
	inner := out[r-1]
	la, lb := sa[r-1], sb[r-1]
	o := 0
	for {
		a, b := ba, bb
		for i := 0; i < inner; i++ {
			fn(o, a, b)
			o++
			a += la
			b += lb
		}
		var more bool
		if ba, bb, more = nextRow(idx, out, sa, sb, ba, bb); !more {
			return
		}
	}
}

// expandTo materialises t broadcast to shape out.
func expandTo(t *Tensor, out []int) *Tensor {
	res := NewTensor(t.DType, out)
	st := bcastStrides(t.Shape, out)
	zero := make([]int, len(out))
	switch {
	case t.F != nil:
		walk2(out, st, zero, func(o, a, _ int) { res.F[o] = t.F[a] })
	case t.I != nil:
		walk2(out, st, zero, func(o, a, _ int) { res.I[o] = t.I[a] })
	default:
		walk2(out, st, zero, func(o, a, _ int) { res.B[o] = t.B[a] })
	}
	return res
}

// nextRow steps the multi-index idx over every axis of dims but the last
// to the next row, moving the operand offsets ba and bb along their
// strides; more is false after the last row.
func nextRow(idx, dims, sa, sb []int, ba, bb int) (int, int, bool) {
	for ax := len(dims) - 2; ax >= 0; ax-- {
		idx[ax]++
		ba += sa[ax]
		bb += sb[ax]
		if idx[ax] < dims[ax] {
			return ba, bb, true
		}
		ba -= sa[ax] * dims[ax]
		bb -= sb[ax] * dims[ax]
		idx[ax] = 0
	}
	return ba, bb, false
}
