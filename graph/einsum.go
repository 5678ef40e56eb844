package graph

import (
	"fmt"
	"strings"
)

// ParseEinsum splits an equation ("bhid,bhjd->bhij") into per-operand label
// strings and the output labels, expanding "..." into private labels
// (digits) right-aligned over the operands' ranks, as numpy broadcasts them.
// A rank < 0 is unknown: its term may not hold "...". Without "->" the
// output is the ellipsis labels, then the labels seen once, sorted. The
// Go runtime (eval/einsum.go), shape inference (infer_nn.go) and the
// matcher (passes/match) read equations through it.
func ParseEinsum(eq string, ranks []int) ([]string, string, error) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(ranks) {
		return nil, "", fmt.Errorf("einsum %q has %d operands, got %d inputs", eq, len(terms), len(ranks))
	}
	ell := 0
	for i, t := range terms {
		if strings.Contains(t, "...") {
			if ranks[i] < 0 {
				return nil, "", fmt.Errorf("einsum %q: the rank of operand %d is unknown", eq, i)
			}
			ell = max(ell, ranks[i]-(len(t)-3))
		}
	}
	if ell > 10 {
		return nil, "", fmt.Errorf("einsum %q: an ellipsis of %d axes", eq, ell)
	}
	ellLabels := ""
	for i := 0; i < ell; i++ {
		ellLabels += string(rune('0' + i))
	}
	for i, t := range terms {
		if strings.Contains(t, "...") {
			n := ranks[i] - (len(t) - 3)
			if n < 0 {
				return nil, "", fmt.Errorf("einsum term %q for rank %d", t, ranks[i])
			}
			terms[i] = strings.Replace(t, "...", ellLabels[ell-n:], 1)
		}
		if ranks[i] >= 0 && len(terms[i]) != ranks[i] {
			return nil, "", fmt.Errorf("einsum term %q for rank %d", t, ranks[i])
		}
	}
	if !explicit {
		count := map[rune]int{}
		for _, t := range terms {
			for _, r := range t {
				count[r]++
			}
		}
		rhs = ellLabels
		for r := 'A'; r <= 'z'; r++ {
			if count[r] == 1 {
				rhs += string(r)
			}
		}
	} else {
		rhs = strings.Replace(rhs, "...", ellLabels, 1)
	}
	for _, t := range append(terms, rhs) {
		seen := map[rune]bool{}
		for _, r := range t {
			if seen[r] {
				return nil, "", fmt.Errorf("einsum %q: repeated label in one term (diagonals) is not supported", eq)
			}
			seen[r] = true
		}
	}
	return terms, rhs, nil
}
