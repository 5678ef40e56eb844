package eval

import "math"

// attnSpec describes one batched attention problem over contiguous
// (B,H,N,D) float32 tensors. Masks are read through broadcast strides over
// (B,Hq,Nq,Nk), never expanded.
type attnSpec struct {
	B, Hq, Hkv, Nq, Nk, Dqk, Dv int
	Q, K, V                     []float32

	scale   float64
	softcap float64 // > 0: s = softcap·tanh(s/softcap), before masks

	fmask []float32 // additive mask, or nil
	fst   [4]int
	bmask []bool // true = attend, or nil
	bst   [4]int

	causal    bool
	causalOff []int // per batch: key j admissible for query i iff j <= i+off[b]
	kvLen     []int // per batch: keys j >= kvLen[b] are padding, or nil

	// When fill is set, positions excluded by bmask/causal/kvLen get
	// fillValue added (ORT contrib semantics) instead of being removed.
	fill      bool
	fillValue float64
}

// Tile sizes: a query block shares each loaded key block.
const (
	attnBQ = 16
	attnBK = 64
)

// flashAttention computes softmax(s)·V tile by tile with an online softmax
// (running max and sum, rescaled as each key block arrives) — no Nq×Nk
// buffer — in parallel over (batch, head, query block). Rows with no
// admissible key give zeros. Result is (B,Hq,Nq,Dv).
func flashAttention(sp *attnSpec, threads int) []float32 {
	out := make([]float32, sp.B*sp.Hq*sp.Nq*sp.Dv)
	qBlocks := (sp.Nq + attnBQ - 1) / attnBQ
	tasks := sp.B * sp.Hq * qBlocks
	group := sp.Hq / sp.Hkv
	if sp.B*sp.Hq*sp.Nq*sp.Nk*(sp.Dqk+sp.Dv) < 1<<15 {
		threads = 1
	}
	parallelFor(tasks, threads, func(lo, hi int) {
		s := make([]float64, attnBQ*attnBK)
		m := make([]float64, attnBQ)
		l := make([]float64, attnBQ)
		acc := make([]float64, attnBQ*sp.Dv)
		for t := lo; t < hi; t++ {
			b := t / (sp.Hq * qBlocks)
			h := (t / qBlocks) % sp.Hq
			q0 := (t % qBlocks) * attnBQ
			q1 := min(q0+attnBQ, sp.Nq)
			nq := q1 - q0
			kh := h / group
			qBase := ((b*sp.Hq + h) * sp.Nq) * sp.Dqk
			kBase := ((b*sp.Hkv + kh) * sp.Nk) * sp.Dqk
			vBase := ((b*sp.Hkv + kh) * sp.Nk) * sp.Dv
			for i := 0; i < nq; i++ {
				m[i], l[i] = math.Inf(-1), 0
			}
			clear(acc[:nq*sp.Dv])
			for k0 := 0; k0 < sp.Nk; k0 += attnBK {
				k1 := min(k0+attnBK, sp.Nk)
				nk := k1 - k0
				for i := 0; i < nq; i++ {
					qi := q0 + i
					qrow := sp.Q[qBase+qi*sp.Dqk : qBase+(qi+1)*sp.Dqk]
					srow := s[i*attnBK : i*attnBK+nk]
					for jj := range srow {
						srow[jj] = sp.score(b, h, qi, k0+jj, qrow, sp.K[kBase+(k0+jj)*sp.Dqk:kBase+(k0+jj+1)*sp.Dqk])
					}
					// online softmax update for row i
					bm := math.Inf(-1)
					for _, x := range srow {
						if x > bm { // scores are never NaN (see score)
							bm = x
						}
					}
					if math.IsInf(bm, -1) {
						continue // nothing admissible in this block
					}
					mNew := max(m[i], bm)
					corr := math.Exp(m[i] - mNew) // 0 when m was -inf
					l[i] *= corr
					arow := acc[i*sp.Dv : (i+1)*sp.Dv]
					if corr != 1 {
						for d := range arow {
							arow[d] *= corr
						}
					}
					for jj, x := range srow {
						p := math.Exp(x - mNew)
						if p == 0 {
							continue
						}
						l[i] += p
						vrow := sp.V[vBase+(k0+jj)*sp.Dv : vBase+(k0+jj+1)*sp.Dv]
						for d, v := range vrow {
							arow[d] += p * float64(v)
						}
					}
					m[i] = mNew
				}
			}
			oBase := ((b*sp.Hq + h) * sp.Nq) * sp.Dv
			for i := 0; i < nq; i++ {
				orow := out[oBase+(q0+i)*sp.Dv : oBase+(q0+i+1)*sp.Dv]
				if l[i] == 0 {
					continue // fully masked row: zeros
				}
				for d := range orow {
					orow[d] = float32(acc[i*sp.Dv+d] / l[i])
				}
			}
		}
	})
	return out
}

// score is the masked, scaled logit of query i against key j; -Inf when the
// key is excluded.
func (sp *attnSpec) score(b, h, i, j int, q, k []float32) float64 {
	dot := float32(0)
	for d, x := range q {
		dot += x * k[d]
	}
	s := float64(dot) * sp.scale
	if sp.softcap > 0 {
		s = sp.softcap * math.Tanh(s/sp.softcap)
	}
	masked := false
	if sp.bmask != nil && !sp.bmask[b*sp.bst[0]+h*sp.bst[1]+i*sp.bst[2]+j*sp.bst[3]] {
		masked = true
	}
	if sp.causal && j > i+sp.causalOff[b] {
		masked = true
	}
	if sp.kvLen != nil && j >= sp.kvLen[b] {
		masked = true
	}
	if masked {
		if !sp.fill {
			return math.Inf(-1)
		}
		s += sp.fillValue
	}
	if sp.fmask != nil {
		s += float64(sp.fmask[b*sp.fst[0]+h*sp.fst[1]+i*sp.fst[2]+j*sp.fst[3]])
	}
	if math.IsNaN(s) {
		return math.Inf(-1)
	}
	return s
}

// setMask attaches a mask tensor broadcast over (B,Hq,Nq,Nk).
func (sp *attnSpec) setMask(m *Tensor) {
	shape := []int{sp.B, sp.Hq, sp.Nq, sp.Nk}
	st := bcastStrides(m.Shape, shape)
	var arr [4]int
	copy(arr[:], st)
	if m.B != nil {
		sp.bmask, sp.bst = m.B, arr
	} else {
		sp.fmask, sp.fst = m.F, arr
	}
}

// sameCausalOff gives every batch the same causal offset.
func sameCausalOff(b, off int) []int {
	o := make([]int, b)
	for i := range o {
		o[i] = off
	}
	return o
}
