package report

import (
	"fmt"
	"strconv"
	"strings"
)

// reportView is the one model of a Report that every format renders
// (templates/report.*.tmpl): each row and line is decided here, once; the
// templates only lay it out and escape it for their format.
type reportView struct {
	*Report
	Aligned bool // text tables padded into columns
	Title   string
	Page    string // the HTML page's title
	// Headline is the one-line verdict; Detail is it without its
	// "changed: " or "no change: " lead.
	Headline, Detail string
	FusedText        string
	Cards            []card
	Sides            []sideView
	Sites            []siteView // A's sites, then B's new ones
	Checks           []validationCheck
	IOChanged        bool
	IO               []ioView
	Nodes            nodeList
	Inits            initList
	Chart            *chartView
	Provenance       string
}

// card is one figure of the HTML summary.
type card struct{ Key, Value, Class string }

// sideView is model A or B in the text summary lines.
type sideView struct {
	Key string
	ModelSummary
}

// siteView is one row of the site tables.
type siteView struct {
	ID int
	// Label is the ID, prefixed "b" for a site of B only.
	Label, Where, Variant                           string
	Batch, Heads, QLen, KVLen, HeadDim, VHeadDim    string
	DType, Mask, Status, Op, Worst, Verdict, Reason string
	Scores, Fused, After                            *int64
}

// Shape is B·H·Nq·Nk; HeadDims is Dqk/Dv.
func (s siteView) Shape() string    { return s.Batch + "·" + s.Heads + "·" + s.QLen + "·" + s.KVLen }
func (s siteView) HeadDims() string { return s.HeadDim + "/" + s.VHeadDim }

// Bytes are the scores, fused and after sizes, the HTML table's columns.
func (s siteView) Bytes() []*int64 { return []*int64{s.Scores, s.Fused, s.After} }

// validationCheck is one validation check: an error, or a row per output.
type validationCheck struct {
	Name, Error, Reduced string
	Outputs              []outputView
}

type outputView struct {
	Output, MaxAbs, MaxRel, MeanAbs, Cosine, WorstAt, Atol, Verdict string
	NaNs                                                            int
	Pass                                                            bool
}

// ioView is one graph input or output of either side.
type ioView struct {
	Kind string // input or output
	SigChange
	SigA, SigB string
}

// change is how a node or initializer differs between A and B.
type change int

const (
	removed change = iota
	added
	changed
)

func (c change) String() string { return [...]string{"removed", "added", "changed"}[c] }

// Sign marks the change in text tables; Mark in Markdown, whose minus is
// the typographic one.
func (c change) Sign() string { return [...]string{"-", "+", "~"}[c] }
func (c change) Mark() string { return [...]string{"−", "+", "~"}[c] }

// nodeRow is one node that changed: its label and op ("domain.Op"). Rows
// are flat structs: templates find a field of an embedded struct by a
// slower search, and the node lists are most of a report's rows.
type nodeRow struct {
	Change   change
	Name, Op string
}

// nodeList is every node that changed (HTML lists all) and the ones text
// and Markdown show: listLimit of each kind, More the rest.
type nodeList struct {
	NodeDiff
	Any, Open   bool // Open: few enough for HTML to show unfolded
	All, Listed []nodeRow
	More        int
}

// initRow is one initializer that changed; What is "removed", "added" or
// what changed ("dims", "dtype", "content").
type initRow struct {
	Change     change
	Name, A, B string
	What       string
}

// initList is every initializer that changed and the first listLimit of
// them, which text and Markdown show.
type initList struct {
	InitDiff
	Any, Open   bool
	All, Listed []initRow
	More        int
}

func newReportView(r *Report, aligned bool) *reportView {
	v := &reportView{Report: r, Aligned: aligned, Title: r.title(), Page: r.title() + ": " + baseOf(r.A.Path), Headline: r.Headline(), Detail: r.headlineDetail(), FusedText: r.fusedText(),
		Sides: []sideView{{"a", r.A}, {"b", r.B}}, Provenance: r.Provenance.Line()}
	v.Cards = r.cards()
	for _, list := range [][]SiteReport{r.Sites, r.NewSites} {
		for i := range list {
			v.Sites = append(v.Sites, newSiteView(&list[i]))
		}
	}
	if len(v.Sites) > 0 {
		all := append(append([]SiteReport{}, r.Sites...), r.NewSites...)
		v.Chart = newChart(all)
	}
	if r.Validation != nil {
		for i := range r.Validation.Checks {
			v.Checks = append(v.Checks, newValidationCheck(&r.Validation.Checks[i]))
		}
	}
	v.IOChanged = changedSigs(r.Inputs)+changedSigs(r.Outputs) > 0
	for _, k := range []struct {
		kind string
		list []SigChange
	}{{"input", r.Inputs}, {"output", r.Outputs}} {
		for _, c := range k.list {
			v.IO = append(v.IO, ioView{Kind: k.kind, SigChange: c, SigA: sigText(c.A), SigB: sigText(c.B)})
		}
	}
	v.Nodes = newNodeList(r.Nodes)
	v.Inits = newInitList(r.Inits)
	return v
}

func newSiteView(s *SiteReport) siteView {
	label := strconv.Itoa(s.ID)
	if s.Status == SiteNew {
		label = "b" + label
	}
	return siteView{ID: s.ID, Label: label, Where: s.where(), Variant: s.Variant,
		Batch: dimText(s.Shape.Batch), Heads: dimText(s.Shape.Heads), QLen: dimText(s.Shape.QLen), KVLen: dimText(s.Shape.KVLen),
		HeadDim: dimText(s.Shape.HeadDim), VHeadDim: dimText(s.Shape.VHeadDim),
		DType: s.DType, Mask: s.maskText(), Status: string(s.Status), Op: s.opText(), Worst: s.worst(), Verdict: s.verdict(),
		Reason: s.Reason, Scores: s.ScoreBytes, Fused: s.FusedBytes, After: s.BytesAfter}
}

func newValidationCheck(c *SiteValidation) validationCheck {
	cv := validationCheck{Name: c.Name, Error: c.Error, Reduced: c.Reduced}
	for i := range c.Outputs {
		m := &c.Outputs[i]
		cv.Outputs = append(cv.Outputs, outputView{Output: m.Output, MaxAbs: num(m.MaxAbs, "%.3g"), MaxRel: num(m.MaxRel, "%.3g"),
			MeanAbs: num(m.MeanAbs, "%.3g"), Cosine: cosineText(m.Cosine), WorstAt: fmt.Sprint(m.WorstIndex),
			Atol: fmt.Sprintf("%.3g", m.Atol), Verdict: outputVerdict(c, m), NaNs: m.NaNs, Pass: m.Pass})
	}
	return cv
}

func newNodeList(n NodeDiff) nodeList {
	l := nodeList{NodeDiff: n, Any: len(n.Removed)+len(n.Added)+len(n.Changed) > 0}
	for _, k := range []struct {
		c    change
		list []NodeRef
	}{{removed, n.Removed}, {added, n.Added}, {changed, n.Changed}} {
		for i, x := range k.list {
			row := nodeRow{k.c, x.Name, x.OpName()}
			l.All = append(l.All, row)
			if i < listLimit {
				l.Listed = append(l.Listed, row)
			} else {
				l.More++
			}
		}
	}
	l.Open = openIf(len(l.All))
	return l
}

func newInitList(in InitDiff) initList {
	l := initList{InitDiff: in, Any: len(in.Removed)+len(in.Added)+len(in.Changed) > 0}
	for _, x := range in.Removed {
		l.All = append(l.All, initRow{Change: removed, Name: x.Name, A: initText(x), What: "removed"})
	}
	for _, x := range in.Added {
		l.All = append(l.All, initRow{Change: added, Name: x.Name, B: initText(x), What: "added"})
	}
	for _, x := range in.Changed {
		l.All = append(l.All, initRow{Change: changed, Name: x.Name, A: initText(x.A), B: initText(x.B), What: x.Reason})
	}
	l.Listed = l.All[:min(len(l.All), listLimit)]
	l.More = len(l.All) - len(l.Listed)
	l.Open = openIf(len(l.All))
	return l
}

// cards are the HTML report's summary figures.
func (r *Report) cards() []card {
	fused := fmt.Sprintf("%d / %d", r.Totals.Fused, r.Totals.Sites)
	if r.Totals.Approximate > 0 {
		fused += fmt.Sprintf(" (%d approx.)", r.Totals.Approximate)
	}
	cs := []card{
		{"sites fused", fused, ""},
		{"score memory before", HumanBytes(r.Totals.BytesBefore), ""},
		{"after", HumanBytes(r.Totals.BytesAfter), ""},
		{"nodes", fmt.Sprintf("%d → %d", r.A.Nodes, r.B.Nodes), ""},
		{"initializers", fmt.Sprintf("%d → %d", r.A.Initializers, r.B.Initializers), ""},
	}
	if v := r.Validation; v != nil {
		cs = append(cs, card{"validation", v.Verdict, passClass(v.Pass)})
	}
	return cs
}

func passClass(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// openIf: HTML shows a list of changes unfolded when it has one to 60.
func openIf(n int) bool { return n > 0 && n <= 60 }

func baseOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
