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
	// half: a float16 MultiHeadAttention adds its attention_bias in float16
	// (score and sum rounded), as this runtime evaluates the fp16 Add of the
	// graph it replaced; it decides the rows a finite fill leaves
	// (docs/fully-masked-rows.md)
	half  bool
	bmask []bool // true = attend, or nil
	bst   [4]int

	causal    bool
	causalOff []int // per batch: key j admissible for query i iff j <= i+off[b]
	window    int   // > 0 with causal: and only keys j > i+off[b]-window
	kvLen     []int // per batch: keys j >= kvLen[b] are padding, or nil

	// When fill is set, positions excluded by bmask/causal/kvLen get
	// fillValue added (ORT contrib semantics) instead of being removed.
	fill      bool
	fillValue float64
}

// Tile sizes: a query block shares each packed key block. attnBQ is a
// multiple of gemmMR and attnBK of gemmNR, so both products run on the GEMM
// micro-kernel (gemm.go) whole tiles at a time.
const (
	attnBQ = 48
	attnBK = 64
)

// attnBufs are one worker's packed tiles.
type attnBufs struct {
	qp, kp, vp, pp, s, acc, m, l []float32
	tile                         [gemmMR * gemmNR]float32
}

func newAttnBufs(sp *attnSpec) *attnBufs {
	dvPad := (sp.Dv + gemmNR - 1) / gemmNR * gemmNR
	return &attnBufs{
		qp: make([]float32, attnBQ*sp.Dqk), kp: make([]float32, attnBK*sp.Dqk),
		vp: make([]float32, attnBK*dvPad), pp: make([]float32, attnBQ*attnBK),
		s: make([]float32, attnBQ*attnBK), acc: make([]float32, attnBQ*sp.Dv),
		m: make([]float32, attnBQ), l: make([]float32, attnBQ),
	}
}

// flashAttention computes softmax(s)·V tile by tile with an online softmax
// (running max and sum, rescaled as each key block arrives) — no Nq×Nk
// buffer — in parallel over (batch, head, query block). Rows with no
// admissible key give zeros. Result is (B,Hq,Nq,Dv).
//
// Scores, probabilities and the output accumulate in float32, like ONNX
// Runtime's CPU attention; exponentials use expf (exp32.go). Q·Kᵀ and P·V
// run on the GEMM micro-kernel over packed blocks.
func flashAttention(sp *attnSpec, threads int) []float32 {
	out := make([]float32, sp.B*sp.Hq*sp.Nq*sp.Dv)
	qBlocks := (sp.Nq + attnBQ - 1) / attnBQ
	tasks := sp.B * sp.Hq * qBlocks
	if sp.B*sp.Hq*sp.Nq*sp.Nk*(sp.Dqk+sp.Dv) < 1<<15 {
		threads = 1
	}
	parallelFor(tasks, threads, func(lo, hi int) {
		w := newAttnBufs(sp)
		for t := lo; t < hi; t++ {
			b := t / (sp.Hq * qBlocks)
			h := (t / qBlocks) % sp.Hq
			q0 := (t % qBlocks) * attnBQ
			sp.queryBlock(w, out, b, h, q0, min(q0+attnBQ, sp.Nq))
		}
	})
	return out
}

// queryBlock computes output rows [q0,q1) of head h of batch b.
func (sp *attnSpec) queryBlock(w *attnBufs, out []float32, b, h, q0, q1 int) {
	nq := q1 - q0
	kh := h / (sp.Hq / sp.Hkv)
	dqk, dv := sp.Dqk, sp.Dv
	qBase := ((b*sp.Hq + h) * sp.Nq) * dqk
	kBase := ((b*sp.Hkv + kh) * sp.Nk) * dqk
	vBase := ((b*sp.Hkv + kh) * sp.Nk) * dv
	plain := sp.fmask == nil && sp.bmask == nil && !sp.causal && sp.kvLen == nil && sp.softcap <= 0
	scale := float32(sp.scale)
	negInf := float32(math.Inf(-1))
	packA(sp.Q[qBase:], dqk, 0, dqk, q0, q1, w.qp)
	for i := 0; i < nq; i++ {
		w.m[i], w.l[i] = negInf, 0
	}
	clear(w.acc[:nq*dv])
	for k0 := 0; k0 < sp.Nk; k0 += attnBK {
		k1 := min(k0+attnBK, sp.Nk)
		nk := k1 - k0
		packKT(sp.K[kBase:], dqk, k0, k1, w.kp)
		// S = Q·Kᵀ for the block
		macroKernel(dqk, nq, nk, w.qp, w.kp, dqk, gemmNR, w.s, attnBK, false, &w.tile)
		// online softmax per row; P goes to w.pp as gemmMR-tall slivers
		for i := 0; i < nq; i++ {
			srow := w.s[i*attnBK : i*attnBK+nk]
			if plain {
				for jj, x := range srow {
					srow[jj] = x * scale
				}
			} else {
				for jj, x := range srow {
					srow[jj] = float32(sp.scoreOf(b, h, q0+i, k0+jj, x))
				}
			}
			sl := w.pp[(i/gemmMR)*gemmMR*nk:]
			r := i % gemmMR
			bm := negInf
			nan := false
			for _, x := range srow {
				if x > bm { // the builtin max pays for NaN and ±0
					bm = x
				} else if x != x {
					nan = true
				}
			}
			if nan {
				// A NaN score makes the row NaN, as softmax does in the graph
				// (docs/ops.md "NaN"): as the maximum, it turns the correction,
				// P, l and the accumulator to NaN from here on.
				bm = float32(math.NaN())
			}
			if bm == negInf { // nothing admissible in this block
				for jj := range srow {
					sl[jj*gemmMR+r] = 0
				}
				continue
			}
			mNew := max(w.m[i], bm)
			if corr := expf(w.m[i] - mNew); corr != 1 { // 0 when m was -inf
				w.l[i] *= corr
				arow := w.acc[i*dv : (i+1)*dv]
				for d := range arow {
					arow[d] *= corr
				}
			}
			w.l[i] += float32(expShift(srow, srow, mNew))
			for jj, p := range srow {
				sl[jj*gemmMR+r] = p
			}
			w.m[i] = mNew
		}
		for i := nq; i < (nq+gemmMR-1)/gemmMR*gemmMR; i++ { // padding rows of the last sliver
			sl := w.pp[(i/gemmMR)*gemmMR*nk:]
			for jj := 0; jj < nk; jj++ {
				sl[jj*gemmMR+i%gemmMR] = 0
			}
		}
		// acc += P·V
		packB(sp.V[vBase:], dv, k0, nk, 0, dv, w.vp)
		macroKernel(nk, nq, dv, w.pp, w.vp, nk, gemmNR, w.acc, dv, true, &w.tile)
	}
	oBase := ((b*sp.Hq + h) * sp.Nq) * dv
	for i := 0; i < nq; i++ {
		if w.l[i] == 0 {
			continue // fully masked row: zeros
		}
		orow := out[oBase+(q0+i)*dv : oBase+(q0+i+1)*dv]
		inv := 1 / w.l[i]
		for d, x := range w.acc[i*dv : (i+1)*dv] {
			orow[d] = x * inv
		}
	}
}

// packKT packs rows [k0,k1) of K (row stride dqk) transposed, as the
// 16-key panels the micro-kernel reads for Q·Kᵀ, zero-padding keys.
func packKT(k []float32, dqk, k0, k1 int, dst []float32) {
	for jr := k0; jr < k1; jr += gemmNR {
		nr := min(gemmNR, k1-jr)
		panel := dst[(jr-k0)*dqk : (jr-k0)*dqk+dqk*gemmNR]
		for x := 0; x < gemmNR; x++ {
			if x >= nr {
				for p := 0; p < dqk; p++ {
					panel[p*gemmNR+x] = 0
				}
				continue
			}
			for p, v := range k[(jr+x)*dqk : (jr+x+1)*dqk] {
				panel[p*gemmNR+x] = v
			}
		}
	}
}

// score is the masked, scaled logit of query i against key j; -Inf when the
// key is excluded.
func (sp *attnSpec) score(b, h, i, j int, q, k []float32) float64 {
	dot := float32(0)
	for d, x := range q {
		dot += x * k[d]
	}
	return sp.scoreOf(b, h, i, j, dot)
}

// scoreOf scales, caps and masks the dot product of query i and key j.
func (sp *attnSpec) scoreOf(b, h, i, j int, dot float32) float64 {
	s := float64(dot) * sp.scale
	if sp.softcap > 0 {
		s = sp.softcap * math.Tanh(s/sp.softcap)
	}
	masked := false
	if sp.bmask != nil && !sp.bmask[b*sp.bst[0]+h*sp.bst[1]+i*sp.bst[2]+j*sp.bst[3]] {
		masked = true
	}
	if !sp.admitted(b, i, j) {
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
		m := float64(sp.fmask[b*sp.fst[0]+h*sp.fst[1]+i*sp.fst[2]+j*sp.fst[3]])
		if sp.half {
			s = half(half(s) + m)
		} else {
			s += m
		}
	}
	return s // NaN stays NaN: its row is NaN (docs/ops.md "NaN")
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

// half rounds x to the nearest float16.
func half(x float64) float64 {
	v := [1]float32{float32(x)}
	roundHalf(v[:])
	return float64(v[0])
}
