package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// listLimit caps the node and initializer lists of the text and Markdown
// forms; JSON and HTML list everything.
const listLimit = 40

// Headline is the one-line verdict of a comparison.
func (r *Report) Headline() string {
	if !r.Changed {
		return fmt.Sprintf("no change: the models have the same inputs, outputs, opsets, %d node(s) and %d initializer(s)", r.A.Nodes, r.A.Initializers)
	}
	var parts []string
	if r.Totals.Sites > 0 {
		parts = append(parts, r.fusedText())
		if r.Totals.BytesBefore != nil || r.Totals.BytesAfter != nil {
			parts = append(parts, fmt.Sprintf("score memory %s → %s", HumanBytes(r.Totals.BytesBefore), HumanBytes(r.Totals.BytesAfter)))
		}
	}
	n := r.Nodes
	parts = append(parts, fmt.Sprintf("nodes -%d +%d ~%d", len(n.Removed), len(n.Added), len(n.Changed)))
	i := r.Inits
	parts = append(parts, fmt.Sprintf("initializers -%d +%d ~%d", len(i.Removed), len(i.Added), len(i.Changed)))
	for _, o := range r.Opsets {
		if o.A != o.B {
			parts = append(parts, fmt.Sprintf("opset %s %s → %s", o.Domain, opsetText(o.A), opsetText(o.B)))
		}
	}
	return "changed: " + strings.Join(parts, "; ")
}

// fusedText is "N of M site(s) fused", saying how many are approximate.
func (r *Report) fusedText() string {
	s := fmt.Sprintf("%d of %d site(s) fused", r.Totals.Fused, r.Totals.Sites)
	if r.Totals.Approximate > 0 {
		s += fmt.Sprintf(" (%d approximate)", r.Totals.Approximate)
	}
	return s
}

func opsetText(v int64) string {
	if v == 0 {
		return "none"
	}
	return strconv.FormatInt(v, 10)
}

func (r *Report) title() string {
	if r.Kind == "rewrite" {
		return "attnopt rewrite report"
	}
	return "attnopt diff"
}

func dimText(v any) string { return fmt.Sprint(v) }

func (s *SiteReport) maskText() string {
	switch {
	case s.Causal && s.Mask == "none":
		return "causal"
	case s.Causal:
		return s.Mask + "+causal"
	}
	return s.Mask
}

// opText is the fused op, with the approximation when there is one.
func (s *SiteReport) opText() string {
	if s.Approximation != nil {
		return s.Op + " (approx: " + *s.Approximation + ")"
	}
	return s.Op
}

func (s *SiteReport) verdict() string {
	if s.Validation == nil {
		return ""
	}
	return s.Validation.Verdict
}

// worst is the largest max-abs error of a site's validation.
func (s *SiteReport) worst() string {
	if s.Validation == nil || len(s.Validation.Outputs) == 0 {
		return ""
	}
	var w *float64
	for _, m := range s.Validation.Outputs {
		if m.MaxAbs == nil {
			return "NaN"
		}
		if w == nil || *m.MaxAbs > *w {
			w = m.MaxAbs
		}
	}
	return fmt.Sprintf("%.3g", *w)
}

func num(p *float64, format string) string {
	if p == nil {
		return "NaN"
	}
	return fmt.Sprintf(format, *p)
}

func sigText(s *Signature) string {
	if s == nil {
		return ""
	}
	return s.String()
}

func initText(i InitInfo) string {
	return fmt.Sprintf("%s%v", i.DType, i.Dims)
}

func (r *Report) writeText(w io.Writer, aligned bool) error {
	e := &errWriter{w: w}
	e.printf("%s: %s → %s\n", r.title(), r.A.Path, r.B.Path)
	e.printf("%s\n", r.Headline())
	for _, side := range []struct {
		k string
		m ModelSummary
	}{{"a", r.A}, {"b", r.B}} {
		e.printf("%s: %s: %d node(s), %d initializer(s), %d unfused site(s), %d fused op(s)\n", side.k, side.m.Path, side.m.Nodes, side.m.Initializers, side.m.Sites, len(side.m.Fused))
	}
	if r.Rewrite != nil {
		e.printf("rewrite: target %s (%s), %d node(s) removed, %d layout fold(s)\n", r.Rewrite.Target, r.Rewrite.Op, r.Rewrite.DeadRemoved, r.Rewrite.LayoutFolds)
	}
	if r.RunsWith != "" {
		e.printf("%s\n", r.RunsWith)
	}

	if len(r.Sites)+len(r.NewSites) > 0 {
		e.printf("\nattention sites\n")
		t := newTable(e, aligned)
		t.row("SITE", "SOFTMAX", "VARIANT", "B", "H", "Nq", "Nk", "Dqk", "Dv", "DTYPE", "MASK", "STATUS", "OP", "SCORES", "FUSED", "AFTER", "MAX ABS", "VALIDATION")
		for _, list := range [][]SiteReport{r.Sites, r.NewSites} {
			for _, s := range list {
				id := strconv.Itoa(s.ID)
				if s.Status == SiteNew {
					id = "b" + id
				}
				t.row(id, s.where(), s.Variant, dimText(s.Shape.Batch), dimText(s.Shape.Heads), dimText(s.Shape.QLen), dimText(s.Shape.KVLen),
					dimText(s.Shape.HeadDim), dimText(s.Shape.VHeadDim), s.DType, s.maskText(), s.Status, s.opText(),
					HumanBytes(s.ScoreBytes), HumanBytes(s.FusedBytes), HumanBytes(s.BytesAfter), s.worst(), s.verdict())
			}
		}
		t.flush()
		e.printf("total: %s; score memory %s → %s\n", r.fusedText(), HumanBytes(r.Totals.BytesBefore), HumanBytes(r.Totals.BytesAfter))
		for _, list := range [][]SiteReport{r.Sites, r.NewSites} {
			for _, s := range list {
				if s.Reason != "" {
					e.printf("site %d (%s): %s\n", s.ID, s.where(), s.Reason)
				}
			}
		}
	}

	if v := r.Validation; v != nil {
		e.printf("\nvalidation (runtime %s, scope %s, seed %d): %s\n", v.Runtime, v.Scope, v.Seed, v.Verdict)
		t := newTable(e, aligned)
		t.row("CHECK", "OUTPUT", "MAX ABS", "MAX REL", "MEAN ABS", "COSINE", "WORST AT", "NaN/Inf", "ATOL", "VERDICT")
		for _, c := range v.Checks {
			if c.Error != "" {
				t.row(c.Name, "", "", "", "", "", "", "", "", "ERROR: "+c.Error)
			}
			for _, m := range c.Outputs {
				verdict := outputVerdict(&c, &m)
				t.row(c.Name, m.Output, num(m.MaxAbs, "%.3g"), num(m.MaxRel, "%.3g"), num(m.MeanAbs, "%.3g"), cosineText(m.Cosine),
					fmt.Sprint(m.WorstIndex), strconv.Itoa(m.NaNs), fmt.Sprintf("%.3g", m.Atol), verdict)
			}
		}
		t.flush()
		for _, c := range v.Checks {
			if c.Reduced != "" {
				e.printf("%s: %s\n", c.Name, c.Reduced)
			}
		}
	}

	if changedSigs(r.Inputs)+changedSigs(r.Outputs) > 0 {
		e.printf("\ninputs and outputs\n")
		t := newTable(e, aligned)
		t.row("KIND", "NAME", "STATUS", "A", "B")
		for _, k := range []struct {
			kind string
			list []SigChange
		}{{"input", r.Inputs}, {"output", r.Outputs}} {
			for _, c := range k.list {
				t.row(k.kind, c.Name, c.Status, sigText(c.A), sigText(c.B))
			}
		}
		t.flush()
	}

	e.printf("\nopsets\n")
	t := newTable(e, aligned)
	t.row("DOMAIN", "A", "B")
	for _, o := range r.Opsets {
		t.row(o.Domain, opsetText(o.A), opsetText(o.B))
	}
	t.flush()

	e.printf("\nop counts\n")
	t = newTable(e, aligned)
	t.row("OP", "DOMAIN", "A", "B", "DELTA")
	for _, o := range r.Ops {
		t.row(o.Op, o.Domain, strconv.Itoa(o.A), strconv.Itoa(o.B), delta(o.A, o.B))
	}
	t.flush()

	if n := r.Nodes; len(n.Removed)+len(n.Added)+len(n.Changed) > 0 {
		e.printf("\nnodes (%d unchanged)\n", n.Unchanged)
		t = newTable(e, aligned)
		t.row("CHANGE", "NODE", "OP")
		more := 0
		for _, k := range []struct {
			sign string
			list []NodeRef
		}{{"-", n.Removed}, {"+", n.Added}, {"~", n.Changed}} {
			for i, x := range k.list {
				if i >= listLimit {
					more += len(k.list) - listLimit
					break
				}
				t.row(k.sign, x.Name, x.OpName())
			}
		}
		t.flush()
		if more > 0 {
			e.printf("… %d more (--format json lists every node)\n", more)
		}
	}

	if in := r.Inits; len(in.Removed)+len(in.Added)+len(in.Changed) > 0 {
		e.printf("\ninitializers (%d unchanged)\n", in.Unchanged)
		t = newTable(e, aligned)
		t.row("CHANGE", "NAME", "A", "B", "WHAT")
		rows := 0
		for _, x := range in.Removed {
			if rows++; rows <= listLimit {
				t.row("-", x.Name, initText(x), "", "removed")
			}
		}
		for _, x := range in.Added {
			if rows++; rows <= listLimit {
				t.row("+", x.Name, "", initText(x), "added")
			}
		}
		for _, x := range in.Changed {
			if rows++; rows <= listLimit {
				t.row("~", x.Name, initText(x.A), initText(x.B), x.Reason)
			}
		}
		t.flush()
		if rows > listLimit {
			e.printf("… %d more (--format json lists every initializer)\n", rows-listLimit)
		}
	}
	for _, n := range r.Notes {
		e.printf("note: %s\n", n)
	}
	return e.err
}

// outputVerdict is the verdict of one compared output: ok or FAIL against
// the tolerance, or, for an approximate site, whether its measured error is
// within its bound, or APPROXIMATE when it has none (not a pass).
func outputVerdict(c *SiteValidation, m *OutputMetrics) string {
	switch {
	case c.Verdict == "APPROXIMATE":
		return "APPROXIMATE (not a pass)"
	case !m.Pass:
		return "FAIL"
	case c.Approximate:
		return fmt.Sprintf("approximate: within %.3g", m.Atol)
	}
	return "ok"
}

func changedSigs(cs []SigChange) int {
	n := 0
	for _, c := range cs {
		if c.Status != "same" {
			n++
		}
	}
	return n
}

func delta(a, b int) string {
	switch {
	case b > a:
		return fmt.Sprintf("+%d", b-a)
	case b < a:
		return fmt.Sprintf("-%d", a-b)
	}
	return "0"
}
