package report

// The texts of a Report's fields that every format shows alike: the
// headline, a site's mask, op and worst error, a check's verdict.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/passes"
)

// listLimit caps the node and initializer lists of the text and Markdown
// forms; JSON and HTML list everything.
const listLimit = 40

// Headline is the one-line verdict of a comparison.
func (r *Report) Headline() string {
	if !r.Changed {
		return "no change: " + r.headlineDetail()
	}
	return "changed: " + r.headlineDetail()
}

// headlineDetail is the headline without its lead: what is the same, or
// what changed.
func (r *Report) headlineDetail() string {
	if !r.Changed {
		return fmt.Sprintf("the models have the same inputs, outputs, opsets, %d node(s) and %d initializer(s)", r.A.Nodes, r.A.Initializers)
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
	return strings.Join(parts, "; ")
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
	if r.Kind == KindRewrite {
		return "attnopt rewrite report"
	}
	return "attnopt diff"
}

func dimText(v any) string { return fmt.Sprint(v) }

func (s *SiteReport) maskText() string { return maskText(s.Mask, s.Causal, s.SlidingWindow, s.Softcap) }

// maskText is a site's mask in tables: its kind, "causal", or both, then
// the sliding window and the softcap when the site has them ("bool+causal
// window 4096 softcap 50"), so no table hides what the fused op computes.
func maskText(m passes.MaskKind, causal bool, window int64, softcap float64) string {
	t := string(m)
	switch {
	case causal && m == passes.MaskNone:
		t = "causal"
	case causal:
		t = string(m) + "+causal"
	}
	if window > 0 {
		t += " window " + strconv.FormatInt(window, 10)
	}
	if softcap > 0 {
		t += " softcap " + strconv.FormatFloat(softcap, 'g', -1, 64)
	}
	return t
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
	return string(s.Validation.Verdict)
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

// outputVerdict is the verdict of one compared output: ok or FAIL against
// the tolerance, or, for an approximate site, whether its measured error is
// within its bound, or APPROXIMATE when it has none (not a pass).
func outputVerdict(c *SiteValidation, m *OutputMetrics) string {
	switch {
	case c.Verdict == VerdictApproximate:
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
		if c.Status != SigSame {
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
