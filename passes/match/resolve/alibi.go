package resolve

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// ALiBi with causal. MPT-type models add slope_h·(j − i) to the scores,
// often folded with the causal mask into one bias. On the keys causal keeps
// a term that differs between rows only by a per-row constant is, for the
// softmax, its last query row: a (…, 1, Nk) per-key bias. The rule set
// reads the ramps (passes/match/alibi.go); whether the per-key form holds
// is settled here, once the site is known causal.

// Ramp is slopes · ±(j − i) computed at run time, or slopes · −|j − i|
// (llm-foundry's full ALiBi), which is slopes · (j − i) on the keys causal
// keeps when Nq = Nk.
type Ramp struct {
	Term masks.Term // slopes · ±key ramp, or a KeyRow: the per-key equivalent
	Abs  bool       // equal only where j ≤ i
	// Row: a constant (folded from constant ramps) that must be its last
	// row plus a per-row constant on the keys causal keeps.
	Row *graph.Tensor
}

// holds reports whether the per-key form equals the term up to a per-row
// constant on the keys a site of these lengths keeps.
func (r *Ramp) holds(causal bool, qlen, kvlen graph.Dim) bool {
	switch {
	case r.Row != nil:
		off, ok := posmask.DimMinus(kvlen, qlen)
		return causal && ok && RowShifted(r.Row, posmask.Tri{Off: off})
	case r.Abs:
		// slopes·(−|j − i|) is slopes·(j − i) only on the keys j ≤ i.
		return causal && qlen.Equal(kvlen)
	}
	return true
}

// RowShifted reports whether every kept entry (i, j) of c's planes is
// c[last, j] plus a constant of row i, and the last row keeps every key.
func RowShifted(c *graph.Tensor, t posmask.Tri) bool {
	dims := c.Dims
	rows, cols := dims[len(dims)-2], dims[len(dims)-1]
	off, ok := t.Off.Value()
	if !ok || rows == 0 || cols == 0 || rows-1+off < cols-1 {
		return false
	}
	vals, err := c.Float64s()
	if err != nil {
		return false
	}
	const tol = 1e-6
	plane := rows * cols
	for base := int64(0); base < int64(len(vals)); base += plane {
		last := vals[base+(rows-1)*cols : base+rows*cols]
		for i := int64(0); i < rows; i++ {
			row := vals[base+i*cols : base+(i+1)*cols]
			shift := row[0] - last[0]
			for j := int64(0); j <= i+off && j < cols; j++ {
				if d := row[j] - last[j] - shift; math.Abs(d) > tol*(1+math.Abs(last[j])) {
					return false
				}
			}
		}
	}
	return true
}
