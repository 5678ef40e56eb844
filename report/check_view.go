package report

// checkView is the one model of a Check that every format renders
// (templates/check.*.tmpl).
type checkView struct {
	*Check
	Aligned    bool
	Page       string // the HTML page's title
	BudgetText string
	Verdict    string
	Sites      []checkSiteView
	Fused      []fusedView
	Provenance string
}

type checkSiteView struct {
	CheckSite
	Batch, Heads, QLen, KVLen string
}

// Shape is B·H·Nq·Nk.
func (s checkSiteView) Shape() string {
	return s.Batch + "·" + s.Heads + "·" + s.QLen + "·" + s.KVLen
}

// Over marks a site over the budget.
func (s checkSiteView) Over() bool { return s.Status == CheckOver }

// fusedView is an already-fused op: Op is "domain.Op"; Adds what it adds
// beyond its inputs and output, Over whether that is over the budget.
type fusedView struct {
	Op, Node, Adds string
	Over           bool
}

func newCheckView(c *Check, aligned bool) *checkView {
	v := &checkView{Check: c, Aligned: aligned, Page: "attnopt check: " + baseOf(c.Model), BudgetText: HumanBytes(&c.Budget),
		Verdict: c.verdictLine(), Provenance: c.Provenance.Line()}
	for _, s := range c.Sites {
		v.Sites = append(v.Sites, checkSiteView{CheckSite: s, Batch: dimText(s.Shape.Batch), Heads: dimText(s.Shape.Heads),
			QLen: dimText(s.Shape.QLen), KVLen: dimText(s.Shape.KVLen)})
	}
	for _, f := range c.Fused {
		v.Fused = append(v.Fused, fusedView{Op: domainName(f.Domain) + "." + f.Op, Node: f.Node, Adds: HumanBytes(f.FusedBytes), Over: f.Status == CheckOver})
	}
	return v
}
