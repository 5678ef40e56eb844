package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/internal/opdef"
)

// as4D views a rank-3 (B,N,D) tensor as (B,1,N,D).
func as4D(t *Tensor) ([]int, error) {
	switch len(t.Shape) {
	case 3:
		return []int{t.Shape[0], 1, t.Shape[1], t.Shape[2]}, nil
	case 4:
		return t.Shape, nil
	}
	return nil, fmt.Errorf("attention input of rank %d (want 3 or 4)", len(t.Shape))
}

// qkvSpec validates Q,K,V of attnopt ops and fills the shape fields.
func qkvSpec(q, k, v *Tensor) (*attnSpec, error) {
	if q.F == nil || k.F == nil || v.F == nil {
		return nil, fmt.Errorf("Q, K, V must be float tensors")
	}
	if len(q.Shape) != len(k.Shape) || len(q.Shape) != len(v.Shape) {
		return nil, fmt.Errorf("Q, K, V ranks differ: %v %v %v", q.Shape, k.Shape, v.Shape)
	}
	qs, err := as4D(q)
	if err != nil {
		return nil, err
	}
	ks, _ := as4D(k)
	vs, _ := as4D(v)
	sp := &attnSpec{B: qs[0], Hq: qs[1], Nq: qs[2], Dqk: qs[3], Hkv: ks[1], Nk: ks[2], Dv: vs[3], Q: q.F, K: k.F, V: v.F}
	switch {
	case ks[0] != sp.B || vs[0] != sp.B:
		return nil, fmt.Errorf("batch sizes differ: %v %v %v", q.Shape, k.Shape, v.Shape)
	case ks[3] != sp.Dqk:
		return nil, fmt.Errorf("Q and K head dims differ: %v %v", q.Shape, k.Shape)
	case vs[1] != sp.Hkv || vs[2] != sp.Nk:
		return nil, fmt.Errorf("K and V disagree: %v %v", k.Shape, v.Shape)
	case sp.Hkv == 0 || sp.Hq%sp.Hkv != 0:
		return nil, fmt.Errorf("query heads %d not a multiple of kv heads %d", sp.Hq, sp.Hkv)
	}
	return sp, nil
}

// outShape gives (B,Hq,Nq,Dv), or (B,Nq,Dv) for rank-3 inputs.
func (sp *attnSpec) outShape(rank int) []int {
	if rank == 3 {
		return []int{sp.B, sp.Nq, sp.Dv}
	}
	return []int{sp.B, sp.Hq, sp.Nq, sp.Dv}
}

// kernelLimits refuses, for attnopt's own ops, what the kernels refuse
// (internal/opdef): head sizes outside their limit and a mask of a rank
// the op does not take. The canonical op (passes/canonical/op.go) has no
// kernel and no such limit.
func kernelLimits(c *opCtx, op *opdef.Op, sp *attnSpec, mask *Tensor) error {
	if c.node.Domain != opdef.Domain {
		return nil
	}
	if err := opdef.HeadDims(int64(sp.Dqk), int64(sp.Dv)); err != nil {
		return err
	}
	if m := op.Input("mask"); mask != nil && (len(mask.Shape) < m.MinRank || len(mask.Shape) > m.MaxRank) {
		return fmt.Errorf("mask must have rank %d..%d, got %v", m.MinRank, m.MaxRank, mask.Shape)
	}
	return nil
}

func opFlashAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	a, err := opdef.ReadFlashAttention(c.node)
	if err != nil {
		return nil, err
	}
	q, k, v := in[0], in[1], in[2]
	sp, err := qkvSpec(q, k, v)
	if err != nil {
		return nil, err
	}
	var m *Tensor
	if len(in) > 3 {
		m = in[3]
	}
	if err := kernelLimits(c, opdef.FlashAttention, sp, m); err != nil {
		return nil, err
	}
	sp.scale = attnScale(a.Scale, sp)
	// softcap c > 0: c·tanh(s/c) on the scaled scores, before the mask
	// (attention_kernel.go's scoreOf); the table checked its range.
	sp.softcap = float64(a.Softcap)
	if a.Causal {
		sp.causal = true
		sp.causalOff = sameCausalOff(sp.B, sp.Nk-sp.Nq)
		// Clamped to Nk once, here, as the kernels do (kernels/src/common/params.h):
		// a wider window admits no more keys, and i+off-window, which with
		// INT64_MAX wrapped and dropped every key (issue 34), stays in range.
		sp.window = int(min(a.SlidingWindow, int64(sp.Nk)))
	}
	if m != nil {
		if len(m.Shape) > 4 {
			return nil, fmt.Errorf("mask rank %d > 4", len(m.Shape))
		}
		if _, err := broadcastShapes(m.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk}); err != nil {
			return nil, fmt.Errorf("mask %v does not broadcast to (B,Hq,Nq,Nk)=%v", m.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk})
		}
		if m.F == nil && m.B == nil {
			return nil, fmt.Errorf("mask must be bool or float, got %s", m.DType)
		}
		sp.setMask(m)
	}
	rows := rowSpecOf(a, q.DType)
	o := flashAttention(sp, c.threads)
	sp.fixRows(rows, o)
	return []*Tensor{{DType: q.DType, Shape: sp.outShape(len(q.Shape)), F: o}}, nil
}

// attnScale is the scale attribute, or 1/sqrt(Dqk) when it is absent
// (0: the table's range has no 0).
func attnScale(scale float32, sp *attnSpec) float64 {
	if scale != 0 {
		return float64(scale)
	}
	return float64(float32(1 / math.Sqrt(float64(sp.Dqk))))
}

// windowIDs assigns each token of a row-major grid its window number, Swin
// style: coordinate c falls in window floor(((c-shift) mod G)/w) per axis.
func windowIDs(grid, win, shift []int) ([]int, int) {
	nw := make([]int, len(grid))
	total := 1
	for a := range grid {
		nw[a] = (grid[a] + win[a] - 1) / win[a]
		total *= nw[a]
	}
	ids := make([]int, numel(grid))
	forIndex(grid, func(k int, ix []int) {
		id := 0
		for a, c := range ix {
			g := grid[a]
			p := ((c-shift[a])%g + g) % g
			id = id*nw[a] + p/win[a]
		}
		ids[k] = id
	})
	return ids, total
}

func opWindowAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	a, err := opdef.ReadWindowAttention(c.node)
	if err != nil {
		return nil, err
	}
	q, k, v := in[0], in[1], in[2]
	sp, err := qkvSpec(q, k, v)
	if err != nil {
		return nil, err
	}
	if err := kernelLimits(c, opdef.WindowAttention, sp, nil); err != nil {
		return nil, err
	}
	// The table bounds the axes and entries; the grid must hold Q's tokens.
	grid, win, shift := toInts(a.SpatialShape), toInts(a.Window), toInts(a.Shift)
	if numel(grid) != sp.Nq || sp.Nq != sp.Nk {
		return nil, fmt.Errorf("grid %v has %d tokens; Nq=%d Nk=%d", grid, numel(grid), sp.Nq, sp.Nk)
	}
	sp.scale = attnScale(a.Scale, sp)
	ids, nWin := windowIDs(grid, win, shift)
	members := make([][]int, nWin)
	for t, id := range ids {
		members[id] = append(members[id], t)
	}
	out := make([]float32, sp.B*sp.Hq*sp.Nq*sp.Dv)
	group := sp.Hq / sp.Hkv
	parallelFor(sp.B*sp.Hq*nWin, c.threads, func(lo, hi int) {
		var s []float64
		acc := make([]float64, sp.Dv)
		for t := lo; t < hi; t++ {
			b, h, w := t/(sp.Hq*nWin), (t/nWin)%sp.Hq, t%nWin
			toks := members[w]
			qb := (b*sp.Hq + h) * sp.Nq
			kb := (b*sp.Hkv + h/group) * sp.Nk
			s = append(s[:0], make([]float64, len(toks))...)
			for _, i := range toks {
				qrow := sp.Q[(qb+i)*sp.Dqk : (qb+i+1)*sp.Dqk]
				mx := math.Inf(-1)
				for jj, j := range toks {
					s[jj] = sp.score(b, h, i, j, qrow, sp.K[(kb+j)*sp.Dqk:(kb+j+1)*sp.Dqk])
					mx = math.Max(mx, s[jj])
				}
				sum := 0.0
				clear(acc)
				for jj, j := range toks {
					p := math.Exp(s[jj] - mx)
					sum += p
					for d, x := range sp.V[(kb+j)*sp.Dv : (kb+j+1)*sp.Dv] {
						acc[d] += p * float64(x)
					}
				}
				orow := out[(qb+i)*sp.Dv : (qb+i+1)*sp.Dv]
				for d := range orow {
					orow[d] = float32(acc[d] / sum)
				}
			}
		}
	})
	return []*Tensor{{DType: q.DType, Shape: sp.outShape(len(q.Shape)), F: out}}, nil
}

func init() {
	register("attnopt", "FlashAttention", opFlashAttention)
	// The rewrite's canonical ops (passes/canonical/op.go) have
	// FlashAttention's and WindowAttention's semantics; evaluating them lets
	// tests check a rewrite's stage 1 before any target lowers it.
	register("attnopt.internal", "SDPA", opFlashAttention)
	register("attnopt", "WindowAttention", opWindowAttention)
	register("attnopt.internal", "WindowSDPA", opWindowAttention)
}
