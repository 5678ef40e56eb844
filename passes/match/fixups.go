package match

import (
	"github.com/attnopt/attnopt/internal/steporder"
	"github.com/attnopt/attnopt/passes/match/resolve"
)

// The peels bind what a site computes walking the graph; the fix-ups then
// settle what needs the whole site: K and V read at their own heads and
// layout, the dims, Q's scales, causal and the window, the mask terms'
// rows. Each step reads the draft through a function that returns what it
// found (gqa.go, shapes.go, qscale.go, passes/match/resolve, keyrow.go,
// rows.go) and this file alone writes that into the draft. Each reads
// what the steps it names settled; the order is data, proved at init.
type fixup struct {
	name  string
	after []string
	run   func(s *draft) *Reject
}

var fixups = []fixup{
	// GQA: K and V before their repeat to every query head (gqa.go).
	{name: "unrepeat-kv", run: func(s *draft) *Reject { takeUnrepeated(s, unrepeatedKV(s)); return nil }},
	// dynamo's Kᵀ through a (B·H, N, D) view: K itself (gqa.go).
	{name: "unview-k", after: []string{"unrepeat-kv"}, run: func(s *draft) *Reject {
		if k := unviewedK(s); k != nil {
			s.K, s.KTransposed = k, false
		}
		return nil
	}},
	// B, H, Nq, Nk, D from the operands K and V settled on (shapes.go).
	{name: "shapes", after: []string{"unview-k"}, run: takeShapes},
	// per-head scales on the scores, folded into Q (qscale.go).
	{name: "q-scales", after: []string{"shapes"}, run: checkQScales},
	// causal candidates against (Nq, Nk); those kept are mask terms,
	// checked like every other (passes/match/resolve).
	{name: "causal", after: []string{"shapes"}, run: func(s *draft) *Reject {
		if kept := takeCausal(s); kept {
			return takeShapes(s)
		}
		return nil
	}},
	// terms the same in every query row, built on one (keyrow.go).
	{name: "same-rows", after: []string{"causal"}, run: func(s *draft) *Reject {
		for _, i := range sameRowTerms(s) {
			s.Masks[i].SameRows = true
		}
		return nil
	}},
	// a subtracted finite fill beside other terms (rows.go).
	{name: "finite-fill-alone", after: []string{"causal"}, run: floorBesideTerms},
}

func init() {
	if err := steporder.Check("matcher fix-ups", fixups, func(f fixup) string { return f.name }, func(f fixup) []string { return f.after }); err != nil {
		panic(err)
	}
}

// runFixups runs the fix-ups in order; the first refusal ends the site.
func runFixups(s *draft) *Reject {
	for _, f := range fixups {
		if r := f.run(s); r != nil {
			return r
		}
	}
	return nil
}

// takeUnrepeated reads K and V at their own heads, keeping the repeated
// ones the graph has in Repeated; nothing for nil.
func takeUnrepeated(s *draft, kv *kvSources) {
	if kv == nil {
		return
	}
	s.Repeated = &RepeatedKV{K: s.K, KTransposed: s.KTransposed, V: s.V}
	s.K, s.KTransposed, s.V = kv.k, false, kv.v
}

// takeShapes states the site's dims as its operands give them.
func takeShapes(s *draft) *Reject {
	sh, r := readShapes(s)
	if r != nil {
		return r
	}
	s.Rank, s.DType, s.V = sh.rank, sh.dtype, sh.v
	s.Batch, s.Heads, s.KVHeads = sh.batch, sh.heads, sh.kvHeads
	s.QLen, s.KVLen, s.HeadDim, s.VHeadDim = sh.qLen, sh.kvLen, sh.headDim, sh.vHeadDim
	s.KVBroadcast = s.KVBroadcast || sh.kvBroadcast
	return nil
}

// takeCausal settles the causal candidates (passes/match/resolve) and
// takes what it returns as the site's mask; kept says a candidate stayed a
// mask term.
func takeCausal(s *draft) (kept bool) {
	r := resolve.Causal(s.resolveSite(), s.causal)
	s.Masks, s.maskForm, s.Causal, s.SlidingWindow, s.Fills = r.Masks, r.Form, r.Causal, r.SlidingWindow, r.Fills
	s.biasInputs = append(s.biasInputs, r.Added...)
	s.causal = resolve.Candidates{}
	return r.Kept
}

// resolveSite is what passes/match/resolve reads of the draft.
func (s *draft) resolveSite() resolve.Site {
	return resolve.Site{
		Rank: s.Rank, QLen: s.QLen, KVLen: s.KVLen, DType: s.DType,
		Masks: s.Masks, Form: s.maskForm, Causal: s.Causal, SlidingWindow: s.SlidingWindow,
		Fills: s.Fills, ZeroRowGuard: s.ZeroRowGuard,
	}
}
