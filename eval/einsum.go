package eval

import (
	"fmt"
	"strings"

	"github.com/attnopt/attnopt/graph"
)

// sumOut reduces x over the labels of term not in keep; returns the new
// tensor and its labels.
func sumOut(x *Tensor, term string, keep func(rune) bool) (*Tensor, string) {
	var axes []int64
	rest := ""
	for i, r := range term {
		if keep(r) {
			rest += string(r)
		} else {
			axes = append(axes, int64(i))
		}
	}
	if len(axes) == 0 {
		return x, term
	}
	red, shape, _ := reduceShape(x.Shape, axes, false)
	kept := make([]int, len(x.Shape))
	os := 1
	for i := len(x.Shape) - 1; i >= 0; i-- {
		if !red[i] {
			kept[i] = os
			os *= x.Shape[i]
		}
	}
	out := NewTensor(x.DType, shape)
	acc := make([]float64, numel(shape))
	walk2(x.Shape, contiguousStrides(x.Shape), kept, func(_, i, o int) { acc[o] += float64(x.F[i]) })
	for i, a := range acc {
		out.F[i] = float32(a)
	}
	return out, rest
}

// permuteTo transposes x (labels term) into the label order want.
func permuteTo(x *Tensor, term, want string) *Tensor {
	perm := make([]int, len(want))
	identity := true
	for i, r := range want {
		perm[i] = strings.IndexRune(term, r)
		if perm[i] != i {
			identity = false
		}
	}
	if identity {
		return x
	}
	return transpose(x, perm)
}

func opEinsum(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	eq := c.attrString("equation", "")
	ranks := make([]int, len(in))
	for i, t := range in {
		if t.F == nil {
			return nil, fmt.Errorf("einsum on %s", t.DType)
		}
		ranks[i] = len(t.Shape)
	}
	terms, outL, err := graph.ParseEinsum(eq, ranks)
	if err != nil {
		return nil, err
	}
	dims := map[rune]int{}
	for i, t := range terms {
		for j, r := range t {
			if d, ok := dims[r]; ok && d != in[i].Shape[j] && d != 1 && in[i].Shape[j] != 1 {
				return nil, fmt.Errorf("einsum label %c has sizes %d and %d", r, d, in[i].Shape[j])
			}
			dims[r] = max(dims[r], in[i].Shape[j])
		}
	}
	inOut := func(r rune) bool { return strings.ContainsRune(outL, r) }
	switch len(in) {
	case 1:
		x, t := sumOut(in[0], terms[0], inOut)
		return []*Tensor{permuteTo(x, t, outL)}, nil
	case 2:
	default:
		return nil, fmt.Errorf("einsum with %d operands is not supported", len(in))
	}
	a, ta := in[0], terms[0]
	b, tb := in[1], terms[1]
	// Sum away labels that appear in only one operand and not the output.
	a, ta = sumOut(a, ta, func(r rune) bool { return inOut(r) || strings.ContainsRune(tb, r) })
	b, tb = sumOut(b, tb, func(r rune) bool { return inOut(r) || strings.ContainsRune(ta, r) })
	var batch, left, right, contr string
	for _, r := range ta {
		switch {
		case strings.ContainsRune(tb, r) && inOut(r):
			batch += string(r)
		case strings.ContainsRune(tb, r):
			contr += string(r)
		default:
			left += string(r)
		}
	}
	for _, r := range tb {
		if !strings.ContainsRune(ta, r) {
			right += string(r)
		}
	}
	size := func(labels string) int {
		n := 1
		for _, r := range labels {
			n *= dims[r]
		}
		return n
	}
	full := func(labels string) []int {
		s := make([]int, len(labels))
		for i, r := range labels {
			s[i] = dims[r]
		}
		return s
	}
	// Broadcast size-1 batch/contraction dims, then (Bt,L,K)·(Bt,K,R).
	ap := permuteTo(a, ta, batch+left+contr)
	bp := permuteTo(b, tb, batch+contr+right)
	if want := full(batch + left + contr); !sameShape(ap.Shape, want) {
		ap = expandTo(ap, want)
	}
	if want := full(batch + contr + right); !sameShape(bp.Shape, want) {
		bp = expandTo(bp, want)
	}
	nb, nl, nk, nr := size(batch), size(left), size(contr), size(right)
	aOff, bOff := make([]int, nb), make([]int, nb)
	for i := range aOff {
		aOff[i], bOff[i] = i*nl*nk, i*nk*nr
	}
	res := batchedMatMul(ap.F, bp.F, aOff, bOff, nl, nk, nr, c.threads)
	rt := &Tensor{DType: in[0].DType, Shape: full(batch + left + right), F: res}
	return []*Tensor{permuteTo(rt, batch+left+right, outL)}, nil
}

func init() { register("", "Einsum", opEinsum) }
