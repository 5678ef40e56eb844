package eval

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
)

// Rows with no visible key, as FlashAttention states them (empty_rows,
// mask_fill, causal_fill, fill_once, fill_round, mask_floor; the kernels' twin is
// kernels/src/common/empty_rows.h, the contract docs/fully-masked-rows.md).
// flashAttention writes such rows as zeros; fixRows then recomputes each
// over every key with the source graph's fills.
type rowSpec struct {
	mode       int64 // 0 zeros, 1 literal (NaN when all −inf), 2 literal (zeros when all −inf)
	maskFill   float32
	causalFill float32
	maskFloor  float32 // a float mask value at or below it drops the key (−inf: only −inf)
	once       bool
	round      graph.DType // the literal scores' type; Undefined: float32
}

// rowSpecOf reads the row attributes (internal/opdef checked their
// ranges).
func rowSpecOf(a opdef.FlashAttentionAttrs, dt graph.DType) rowSpec {
	r := rowSpec{mode: a.EmptyRows, maskFill: a.MaskFill, causalFill: a.CausalFill, maskFloor: a.MaskFloor, once: a.FillOnce}
	if a.FillRound {
		r.round = dt
	}
	return r
}

// floor is the float-mask value at or below which a key counts as dropped:
// −inf, or half a finite causal fill (keys causal skips then add nothing to
// a row that sees one above it), or mask_floor (the mask's own finite fill),
// the higher of the two.
func (sp *attnSpec) floor(r rowSpec) float32 {
	fl := float32(math.Inf(-1))
	if sp.causal && !math.IsInf(float64(r.causalFill), -1) {
		fl = r.causalFill / 2
	}
	return max(fl, r.maskFloor)
}

// admitted reports whether causal and the window admit key j for query i:
// the band rule, stated once for the Go runtime (as kernels/src/common/band.h
// states it for the kernels and passes/lower/rows.go bandPlane for graphs).
func (sp *attnSpec) admitted(b, i, j int) bool {
	return !sp.causal || (j <= i+sp.causalOff[b] && (sp.window <= 0 || j > i+sp.causalOff[b]-sp.window))
}

// maskAt is key j's mask element for query i: keep (bool) and value (float).
func (sp *attnSpec) maskAt(b, h, i, j int) (keep bool, value float32) {
	keep = true
	if sp.bmask != nil {
		keep = sp.bmask[b*sp.bst[0]+h*sp.bst[1]+i*sp.bst[2]+j*sp.bst[3]]
	}
	if sp.fmask != nil {
		value = sp.fmask[b*sp.fst[0]+h*sp.fst[1]+i*sp.fst[2]+j*sp.fst[3]]
	}
	return keep, value
}

func (sp *attnSpec) seesAKey(r rowSpec, b, h, i int) bool {
	fl := sp.floor(r)
	for j := 0; j < sp.Nk; j++ {
		if !sp.admitted(b, i, j) {
			continue
		}
		keep, v := sp.maskAt(b, h, i, j)
		if keep && (sp.fmask == nil || v > fl) {
			return true
		}
	}
	return false
}

// fixRows recomputes out's rows that see no key, as r states; a no-op for
// mode 0, and for ops that cannot have such rows.
func (sp *attnSpec) fixRows(r rowSpec, out []float32) {
	if r.mode == 0 || (sp.bmask == nil && sp.fmask == nil && (!sp.causal || sp.Nq <= sp.Nk)) {
		return
	}
	s := make([]float32, sp.Nk)
	acc := make([]float64, sp.Dv)
	group := sp.Hq / sp.Hkv
	round := func(x float32) float32 {
		if r.round == graph.Float16 || r.round == graph.BFloat16 {
			v := []float32{x}
			roundTo(r.round, v)
			return v[0]
		}
		return x
	}
	for b := 0; b < sp.B; b++ {
		for h := 0; h < sp.Hq; h++ {
			qb, kb := (b*sp.Hq+h)*sp.Nq, (b*sp.Hkv+h/group)*sp.Nk
			for i := 0; i < sp.Nq; i++ {
				if sp.seesAKey(r, b, h, i) {
					continue
				}
				q := sp.Q[(qb+i)*sp.Dqk : (qb+i+1)*sp.Dqk]
				mx := float32(math.Inf(-1))
				nan := false
				for j := 0; j < sp.Nk; j++ {
					dot := float32(0)
					for d, x := range q {
						dot += x * sp.K[(kb+j)*sp.Dqk+d]
					}
					keep, v := sp.maskAt(b, h, i, j)
					term := v
					if sp.bmask != nil && !keep {
						term = r.maskFill
					}
					if !sp.admitted(b, i, j) {
						if r.once {
							term = min(term, r.causalFill)
						} else {
							term += r.causalFill
						}
					}
					sc := dot * float32(sp.scale)
					if sp.softcap > 0 {
						sc = float32(sp.softcap * math.Tanh(float64(sc)/sp.softcap))
					}
					s[j] = round(round(sc) + term)
					if s[j] > mx {
						mx = s[j]
					}
					nan = nan || s[j] != s[j] // a NaN score: the row is NaN
				}
				orow := out[(qb+i)*sp.Dv : (qb+i+1)*sp.Dv]
				if math.IsInf(float64(mx), -1) || nan {
					fill := float32(math.NaN())
					if r.mode == 2 && !nan { // a guard tests -inf: NaN stays NaN
						fill = 0
					}
					for d := range orow {
						orow[d] = fill
					}
					continue
				}
				clear(acc)
				sum := 0.0
				for j := 0; j < sp.Nk; j++ {
					w := math.Exp(float64(s[j] - mx))
					if !(w > 0) {
						continue
					}
					sum += w
					for d, x := range sp.V[(kb+j)*sp.Dv : (kb+j+1)*sp.Dv] {
						acc[d] += w * float64(x)
					}
				}
				for d := range orow {
					orow[d] = float32(acc[d] / sum)
				}
			}
		}
	}
}
