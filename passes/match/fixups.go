package match

import "github.com/attnopt/attnopt/internal/steporder"

// The peels bind what a site computes walking the graph; the fix-ups then
// settle what needs the whole site: K and V read at their own heads and
// layout, the dims, Q's scales, causal and the window, the mask terms'
// rows. Each reads what the steps it names settled; the order is data,
// proved at init.
type fixup struct {
	name  string
	after []string
	run   func(m *matcher, s *draft) *Reject
}

var fixups = []fixup{
	// GQA: K and V before their repeat to every query head (gqa.go).
	{name: "unrepeat-kv", run: func(m *matcher, s *draft) *Reject { m.unrepeatKV(s); return nil }},
	// dynamo's Kᵀ through a (B·H, N, D) view: K itself (gqa.go).
	{name: "unview-k", after: []string{"unrepeat-kv"}, run: func(m *matcher, s *draft) *Reject { m.unviewK(s); return nil }},
	// B, H, Nq, Nk, D from the operands K and V settled on (shapes.go).
	{name: "shapes", after: []string{"unview-k"}, run: (*matcher).fillShapes},
	// per-head scales on the scores, folded into Q (qscale.go).
	{name: "q-scales", after: []string{"shapes"}, run: (*matcher).checkQScales},
	// causal candidates against (Nq, Nk); those kept are mask terms,
	// checked like every other (causal_terms.go).
	{name: "causal", after: []string{"shapes"}, run: func(m *matcher, s *draft) *Reject {
		if kept := m.resolveCausal(s); kept {
			return m.fillShapes(s)
		}
		return nil
	}},
	// terms the same in every query row, built on one (keyrow.go).
	{name: "same-rows", after: []string{"causal"}, run: func(m *matcher, s *draft) *Reject { narrowKeyRows(s); return nil }},
	// a subtracted finite fill beside other terms (rows.go).
	{name: "finite-fill-alone", after: []string{"causal"}, run: func(m *matcher, s *draft) *Reject { return floorBesideTerms(s) }},
}

func init() {
	if err := steporder.Check("matcher fix-ups", fixups, func(f fixup) string { return f.name }, func(f fixup) []string { return f.after }); err != nil {
		panic(err)
	}
}

// runFixups runs the fix-ups in order; the first refusal ends the site.
func (m *matcher) runFixups(s *draft) *Reject {
	for _, f := range fixups {
		if r := f.run(m, s); r != nil {
			return r
		}
	}
	return nil
}
