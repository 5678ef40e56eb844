package validate

import (
	"math/rand"
	"testing"
)

// Mask patterns: padding keeps a suffix (left) or prefix (right) of every
// row, at least one key kept and one dropped; the masked-row case drops a
// whole row and keeps a key in every other; all keep keeps all.
func TestKeepPatterns(t *testing.T) {
	shape := []int{3, 1, 4, 10} // batch 3, 4 query rows, 10 keys
	for _, k := range []caseKind{caseRandom, caseLeftPad, caseRightPad, caseMaskedRow, caseAllKeep} {
		keep := keepPattern(shape, k, rand.New(rand.NewSource(1)))
		dead := 0
		for r := 0; r < 12; r++ {
			row := keep[r*10 : (r+1)*10]
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
					t.Errorf("%s row %d: %v", k, r, row)
				}
			case caseRightPad:
				if kept == 0 || kept == 10 || first != 0 || last-first+1 != kept {
					t.Errorf("%s row %d: %v", k, r, row)
				}
			case caseAllKeep:
				if kept != 10 {
					t.Errorf("%s row %d: %v", k, r, row)
				}
			}
		}
		if want := map[caseKind]int{caseMaskedRow: 1}[k]; dead != want {
			t.Errorf("%s: %d fully masked rows, want %d", k, dead, want)
		}
	}
}
