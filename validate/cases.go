package validate

import "math/rand"

// caseKind is one way of generating a model's inputs. Masks are read with
// keys on the last axis and the batch on the first.
type caseKind int

const (
	caseRandom    caseKind = iota // random data; bool masks keep ≥ 1 key per row
	caseLeftPad                   // each batch item drops its first keys (batched generation)
	caseRightPad                  // each batch item drops its last keys (encoders)
	caseMaskedRow                 // random masks, and the first row drops every key
	caseAllKeep                   // masks keep every key, lengths are full
	caseUser                      // the user's own (--inputs)
)

var caseNames = [...]string{
	caseRandom:    "random",
	caseLeftPad:   "left padding",
	caseRightPad:  "right padding",
	caseMaskedRow: "fully masked row",
	caseAllKeep:   "all keep",
	caseUser:      "inputs",
}

func (k caseKind) String() string { return caseNames[k] }

// maskCases are run on every check whose inputs include a mask or a
// length: the layouts real batches have, and the rows with no key at all
// whose result depends on how the source fills masked scores.
var maskCases = []caseKind{caseLeftPad, caseRightPad, caseMaskedRow, caseAllKeep}

// casesFor lists the generated cases a check runs.
func casesFor(roles ...map[string]inputRole) []caseKind {
	for _, rs := range roles {
		for _, r := range rs {
			if r.kind == roleMask || r.kind == roleLength {
				return maskCases
			}
		}
	}
	return []caseKind{caseRandom}
}

// keepPattern says, per element of a mask of this shape, whether the key
// is kept; the keys lie on the axis keysFromEnd places before the last (0:
// the last), the batch on the first.
func keepPattern(shape []int, keysFromEnd int, k caseKind, rng *rand.Rand) []bool {
	axis := len(shape) - 1 - keysFromEnd
	if keysFromEnd <= 0 || axis < 0 {
		return keepKeysLast(shape, k, rng)
	}
	// Lay the pattern out with the keys last, then read it back in the
	// mask's own order: an HF padding mask cut at a site is often
	// (B, 1, 1, Nk, 1) before its Reshape.
	moved := append(append(append([]int(nil), shape[:axis]...), shape[axis+1:]...), shape[axis])
	logical := keepKeysLast(moved, k, rng)
	keep := make([]bool, len(logical))
	inner := 1 // elements per step of the key axis in the mask's layout
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	keys := shape[axis]
	for i := range keep {
		key := (i / inner) % keys
		rest := (i/(inner*keys))*inner + i%inner
		keep[i] = logical[rest*keys+key]
	}
	return keep
}

// keepKeysLast is keepPattern for a mask with its keys on the last axis.
func keepKeysLast(shape []int, k caseKind, rng *rand.Rand) []bool {
	n := 1
	for _, d := range shape {
		n *= d
	}
	keep := make([]bool, n)
	last := 1
	if len(shape) > 0 {
		last = shape[len(shape)-1]
	}
	if last == 0 || n == 0 {
		return keep
	}
	rows := n / last
	batch := 1
	if len(shape) > 1 && shape[0] > 0 {
		batch = shape[0]
	}
	perBatch := max(rows/batch, 1)
	pads := make([]int, batch)
	for b := range pads {
		if last > 1 {
			pads[b] = 1 + rng.Intn(last-1)
		}
	}
	for r := 0; r < rows; r++ {
		row := keep[r*last : (r+1)*last]
		pad := pads[min(r/perBatch, batch-1)]
		switch k {
		case caseLeftPad:
			for j := range row {
				row[j] = j >= pad
			}
		case caseRightPad:
			for j := range row {
				row[j] = j < last-pad
			}
		case caseAllKeep:
			for j := range row {
				row[j] = true
			}
		default:
			for j := range row {
				row[j] = rng.Float64() < 0.7
			}
			row[rng.Intn(last)] = true
			if k == caseMaskedRow && r == 0 {
				for j := range row {
					row[j] = false
				}
			}
		}
	}
	return keep
}
