package eval

import (
	"fmt"
	"math/rand"
	"testing"
)

// im2colRef is the per-element definition im2col must match.
func im2colRef(x []float32, C int, g *convGeom) []float32 {
	n := len(g.in)
	outSp, kSp, inSp := numel(g.out), numel(g.k), numel(g.in)
	inStr := contiguousStrides(g.in)
	cols := make([]float32, C*kSp*outSp)
	forIndex(g.out, func(p int, ox []int) {
		forIndex(g.k, func(ki int, kx []int) {
			off, ok := 0, true
			for d := 0; d < n; d++ {
				ic := ox[d]*g.stride[d] - g.padB[d] + kx[d]*g.dil[d]
				if ic < 0 || ic >= g.in[d] {
					ok = false
				}
				off += ic * inStr[d]
			}
			if !ok {
				return
			}
			for ch := 0; ch < C; ch++ {
				cols[(ch*kSp+ki)*outSp+p] = x[ch*inSp+off]
			}
		})
	})
	return cols
}

// im2col's run-wise copy matches the definition for 1-3 spatial axes with
// padding on either side, strides, dilations and kernels wider than the
// input's padded edge.
func TestIm2col(t *testing.T) {
	cases := []convGeom{
		{in: []int{7}, k: []int{3}, stride: []int{1}, dil: []int{1}, padB: []int{1}, padE: []int{1}},
		{in: []int{9}, k: []int{4}, stride: []int{3}, dil: []int{2}, padB: []int{3}, padE: []int{0}},
		{in: []int{5, 6}, k: []int{3, 3}, stride: []int{2, 1}, dil: []int{1, 2}, padB: []int{2, 0}, padE: []int{1, 3}},
		{in: []int{4, 5, 6}, k: []int{3, 2, 3}, stride: []int{1, 2, 2}, dil: []int{1, 1, 2}, padB: []int{1, 0, 2}, padE: []int{1, 1, 2}},
		{in: []int{2, 3}, k: []int{1, 1}, stride: []int{2, 2}, dil: []int{1, 1}, padB: []int{0, 1}, padE: []int{0, 1}},
	}
	for i, g := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			g.out = make([]int, len(g.in))
			for d := range g.in {
				g.out[d] = (g.in[d]+g.padB[d]+g.padE[d]-g.dil[d]*(g.k[d]-1)-1)/g.stride[d] + 1
			}
			const C = 3
			x := randTensor(rand.New(rand.NewSource(int64(i))), C*numel(g.in)).F
			want := im2colRef(x, C, &g)
			got := make([]float32, len(want))
			for j := range got {
				got[j] = -7 // padding must be written as zeros
			}
			im2col(x, C, &g, got, 2)
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("element %d: %g, want %g", j, got[j], want[j])
				}
			}
		})
	}
}
