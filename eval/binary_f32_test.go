package eval

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// arithF32 is bit-identical to binaryOp's float64 path for every op and
// broadcast pattern: same shapes, scalars, rows, columns, middle axes,
// length-1 axes and rank-0, with NaN, Inf and zero divisors mixed in.
func TestArithF32MatchesBinaryOp(t *testing.T) {
	shapes := [][2][]int{
		{{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {}}, {{}, {5}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {3, 1}},
		{{2, 1, 4}, {1, 3, 1}}, {{1, 1, 7}, {7}}, {{4, 5, 1, 6}, {5, 1, 1}}, {{3, 0}, {3, 1}}, {{}, {}},
		{{64, 33, 40}, {33, 1}}, {{7, 1, 100, 100}, {7, 3, 1, 100}}, // parallel rows
	}
	rng := rand.New(rand.NewSource(5))
	for op, kind := range arithKinds {
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%v%v", op, sh[0], sh[1]), func(t *testing.T) {
				a, b := randTensor(rng, sh[0]...), randTensor(rng, sh[1]...)
				specials := []float32{0, float32(math.Inf(1)), float32(math.NaN()), 1e-30, 3e38}
				for i := range b.F {
					if rng.Intn(4) == 0 {
						b.F[i] = specials[rng.Intn(len(specials))]
					}
				}
				got, ok, err := arithF32(kind, a, b, 2)
				if !ok || err != nil {
					t.Fatalf("ok %v, err %v", ok, err)
				}
				want, err := binaryOp(a, b, 2, ariths[op].ff, ariths[op].fi)
				if err != nil {
					t.Fatal(err)
				}
				if !sameShape(got.Shape, want.Shape) {
					t.Fatalf("shape %v, want %v", got.Shape, want.Shape)
				}
				for i := range want.F {
					g, w := got.F[i], want.F[i]
					if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
						t.Fatalf("element %d: %g, want %g", i, g, w)
					}
				}
			})
		}
	}
}

// gatherF32 (transpose's float path) matches walk2 for permutations that
// keep, split and reverse contiguous runs, and for length-1 and empty axes.
func TestGatherF32(t *testing.T) {
	cases := []struct {
		shape, perm []int
	}{
		{[]int{2, 3, 4}, []int{0, 1, 2}}, {[]int{2, 3, 4}, []int{2, 1, 0}}, {[]int{2, 3, 4, 5}, []int{0, 2, 1, 3}},
		{[]int{1, 6, 1, 5}, []int{3, 0, 2, 1}}, {[]int{3, 0, 2}, []int{2, 0, 1}}, {[]int{}, []int{}}, {[]int{7}, []int{0}},
	}
	rng := rand.New(rand.NewSource(9))
	for _, c := range cases {
		x := randTensor(rng, c.shape...)
		got := transpose(x, c.perm)
		st := contiguousStrides(x.Shape)
		pst := make([]int, len(c.perm))
		for i, p := range c.perm {
			pst[i] = st[p]
		}
		want := make([]float32, len(got.F))
		walk2(got.Shape, pst, make([]int, len(pst)), func(o, a, _ int) { want[o] = x.F[a] })
		for i := range want {
			if got.F[i] != want[i] {
				t.Fatalf("%v perm %v: element %d = %g, want %g", c.shape, c.perm, i, got.F[i], want[i])
			}
		}
	}
}
