package validate

import (
	"math/rand"
	"testing"
)

// Mask patterns: padding keeps a suffix (left) or prefix (right) of every
// row, at least one key kept and one dropped; the masked-row case drops a
// whole row and keeps a key in every other; all keep keeps all. The keys
// lie on the last axis, or before it (an HF padding mask cut as
// (B, 1, 4, 10, 1) before its Reshape), and the rows are read there.
func TestKeepPatterns(t *testing.T) {
	for _, layout := range []struct {
		shape       []int
		keysFromEnd int
		at          func(r, j int) int // element of row r, key j
	}{
		{[]int{3, 1, 4, 10}, 0, func(r, j int) int { return r*10 + j }},    // batch 3, 4 query rows, 10 keys
		{[]int{3, 1, 4, 10, 1}, 1, func(r, j int) int { return r*10 + j }}, // the same, a unit axis after the keys
		{[]int{3, 10, 4}, 1, func(r, j int) int { return (r/4)*40 + j*4 + r%4 }},
	} {
		testKeepPatterns(t, layout.shape, layout.keysFromEnd, layout.at)
	}
}

func testKeepPatterns(t *testing.T, shape []int, keysFromEnd int, at func(r, j int) int) {
	for _, k := range []caseKind{caseRandom, caseLeftPad, caseRightPad, caseMaskedRow, caseAllKeep} {
		keep := keepPattern(shape, keysFromEnd, k, rand.New(rand.NewSource(1)))
		dead := 0
		for r := 0; r < 12; r++ {
			row := make([]bool, 10)
			for j := range row {
				row[j] = keep[at(r, j)]
			}
			kept, first, last := 0, -1, -1
			for j, x := range row {
				if x {
					kept++
					if first < 0 {
						first = j
					}
					last = j
				}
			}
			if kept == 0 {
				dead++
			}
			switch k {
			case caseLeftPad:
				if kept == 0 || kept == 10 || last != 9 || last-first+1 != kept {
					t.Errorf("%v %s row %d: %v", shape, k, r, row)
				}
			case caseRightPad:
				if kept == 0 || kept == 10 || first != 0 || last-first+1 != kept {
					t.Errorf("%v %s row %d: %v", shape, k, r, row)
				}
			case caseAllKeep:
				if kept != 10 {
					t.Errorf("%v %s row %d: %v", shape, k, r, row)
				}
			}
		}
		if want := map[caseKind]int{caseMaskedRow: 1}[k]; dead != want {
			t.Errorf("%v %s: %d fully masked rows, want %d", shape, k, dead, want)
		}
	}
}
