package passes

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
)

// liftSite is stage 1 for an exact site: the site's operands go through
// adapters into the canonical layout (Kᵀ forms, SAGAN's V·Aᵀ, rank 2,
// packed heads, per-head Q scales, KV caches, mask terms combined into one)
// and one attnopt.internal.SDPA computes the attention; the result goes back
// to the site's output layout. Cleanup cancels adapters against the model's
// own layout ops and the lowering's.
func liftSite(e *emit.Emitter, s *Site, zeroEmpty bool) (*graph.Value, error) {
	q, k, v := scaledQ(e, s), naturalK(e, s), naturalV(e, s)
	if s.Rank == 2 {
		q, k, v = e.Unsqueeze(q, 0), e.Unsqueeze(k, 0), e.Unsqueeze(v, 0)
	}
	mask, maskFill, err := maskInput(e, s, scoreDType(s), true)
	if err != nil {
		return nil, err
	}
	mask = liftMaskRank(e, s, mask)
	rows := rowsOfSite(s, mask, maskFill, s.QLen, s.KVLen)
	if zeroEmpty {
		rows = Rows{}
	}
	out := emitSDPA(e, s.ID, q, k, v, mask, s.Scale, s.Causal, s.SlidingWindow, rows)
	if s.Rank == 2 {
		out = e.Squeeze(out, 0)
	}
	return restoreOutput(e, s, out), nil
}
