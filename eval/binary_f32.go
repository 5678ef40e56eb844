package eval

// arithKind selects a float32 arithmetic kernel.
type arithKind uint8

const (
	arithAdd arithKind = iota
	arithSub
	arithMul
	arithDiv
)

var arithKinds = map[string]arithKind{"Add": arithAdd, "Sub": arithSub, "Mul": arithMul, "Div": arithDiv}

// arithF32 computes Add/Sub/Mul/Div of two float tensors with numpy
// broadcasting directly in float32, row by row in parallel. The result is
// bit-identical to binaryOp's (computing in float64 and rounding once):
// for +, -, × and ÷ a float64 result rounded to float32 equals the
// correctly rounded float32 result, as 53 ≥ 2·24+2. ok is false when an
// input is not float; the caller falls back to binaryOp.
func arithF32(kind arithKind, a, b *Tensor, threads int) (out *Tensor, ok bool, err error) {
	if a.F == nil || b.F == nil {
		return nil, false, nil
	}
	shape, err := broadcastShapes(a.Shape, b.Shape)
	if err != nil {
		return nil, true, err
	}
	out = NewTensor(a.DType, shape)
	n := len(out.F)
	if n == 0 {
		return out, true, nil
	}
	dims, sa, sb := coalesce(shape, bcastStrides(a.Shape, shape), bcastStrides(b.Shape, shape))
	r := len(dims)
	inner := dims[r-1]
	la, lb := sa[r-1], sb[r-1]
	rows := n / inner
	parallelFor(rows, elemThreads(n, threads), func(lo, hi int) {
		idx := make([]int, r)
		ba, bb := 0, 0
		rem := lo
		for d := r - 2; d >= 0; d-- { // multi-index of row lo
			idx[d] = rem % dims[d]
			rem /= dims[d]
			ba += idx[d] * sa[d]
			bb += idx[d] * sb[d]
		}
		for row := lo; row < hi; row++ {
			arithRow(kind, out.F[row*inner:(row+1)*inner], a.F, b.F, ba, bb, la, lb)
			ba, bb, _ = nextRow(idx, dims, sa, sb, ba, bb)
		}
	})
	return out, true, nil
}

// arithRow fills dst[i] = a[ia+i·la] op b[ib+i·lb].
func arithRow(kind arithKind, dst, a, b []float32, ia, ib, la, lb int) {
	switch kind {
	case arithAdd:
		for i := range dst {
			dst[i] = a[ia] + b[ib]
			ia += la
			ib += lb
		}
	case arithSub:
		for i := range dst {
			dst[i] = a[ia] - b[ib]
			ia += la
			ib += lb
		}
	case arithMul:
		for i := range dst {
			dst[i] = a[ia] * b[ib]
			ia += la
			ib += lb
		}
	case arithDiv:
		for i := range dst {
			dst[i] = a[ia] / b[ib]
			ia += la
			ib += lb
		}
	}
}

// coalesce merges adjacent axes that every operand walks as one (stride of
// the outer = stride of the inner × its length, which includes both being
// broadcast), so rows are as long as possible. A rank-0 shape becomes [1].
func coalesce(shape []int, sa, sb []int) (dims, ta, tb []int) {
	dims, ta, tb = []int{1}, []int{0}, []int{0}
	for d := range shape {
		last := len(dims) - 1
		if shape[d] == 1 {
			continue // a length-1 axis adds nothing to any walk
		}
		if dims[last] == 1 || (ta[last] == sa[d]*shape[d] && tb[last] == sb[d]*shape[d]) {
			dims[last] *= shape[d]
			ta[last], tb[last] = sa[d], sb[d]
			continue
		}
		dims, ta, tb = append(dims, shape[d]), append(ta, sa[d]), append(tb, sb[d])
	}
	return dims, ta, tb
}

// gatherF32 fills dst (contiguous, shape) from src read through strides
// st, a row at a time over coalesced axes: the float path of transpose,
// without a closure call per element.
func gatherF32(dst, src []float32, shape, st []int) {
	if len(dst) == 0 {
		return
	}
	dims, sa, _ := coalesce(shape, st, make([]int, len(shape)))
	r := len(dims)
	inner, la := dims[r-1], sa[r-1]
	idx := make([]int, r)
	ba := 0
	for row := 0; row < len(dst)/inner; row++ {
		out := dst[row*inner : (row+1)*inner]
		if la == 1 {
			copy(out, src[ba:ba+inner])
		} else {
			ia := ba
			for i := range out {
				out[i] = src[ia]
				ia += la
			}
		}
		ba, _, _ = nextRow(idx, dims, sa, sa, ba, ba)
	}
}
