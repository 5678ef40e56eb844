package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/attnopt/attnopt/validate"
)

// WriteValidation prints a validation report as an aligned table.
func WriteValidation(w io.Writer, r *validate.Report) { WriteValidationTable(w, r, true) }

// WriteValidationTable prints a validation report, its table aligned (for
// a terminal) or tab-separated, one row a line (for pipes and files), then
// the cases each check ran and the verdict.
func WriteValidationTable(w io.Writer, r *validate.Report, aligned bool) {
	fmt.Fprintf(w, "validate %s against %s (runtime %s, scope %s, seed %d)\n", r.Rewritten, r.Original, r.Runtime, r.Scope, r.Seed)
	if r.NoChecks {
		fmt.Fprintln(w, "NO CHECKS: no attention site of the original was rewritten, so nothing was compared (--scope model compares the whole models)")
		return
	}
	tw := tableWriter(w, aligned)
	fmt.Fprintln(tw, "CHECK\tOUTPUT\tMAX ABS\tMAX REL\tMEAN ABS\tCOSINE\tWORST AT\tCASE\tNaN/Inf\tVERDICT")
	for _, c := range r.Checks {
		if c.Error != "" {
			what := "ERROR"
			if c.Verdict == validate.CannotCheck {
				what = "CANNOT CHECK"
			}
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t%s: %s\n", c.Name, what, c.Error)
			continue
		}
		for _, m := range c.Outputs {
			fmt.Fprintf(tw, "%s\t%s\t%.3g\t%.3g\t%.3g\t%s\t%v\t%s\t%s\t%s\n", c.Name, m.Output, m.MaxAbs, m.MaxRel, m.MeanAbs,
				cosineText(m.Cosine), m.WorstIndex, dash(m.Case), nonFinite(m), checkOutputVerdict(c, m))
		}
	}
	tw.Flush()
	writeCases(w, r.Checks)
	for _, c := range r.Checks {
		if c.Reduced != "" {
			fmt.Fprintf(w, "%s: %s\n", c.Name, c.Reduced)
		}
	}
	fmt.Fprintln(w, r.Verdict.ReportString())
}

// outputVerdict is the verdict column of one compared output.
func checkOutputVerdict(c validate.Check, m validate.Metrics) string {
	switch {
	case c.Verdict == validate.Approximate && c.RecordedBound > 0:
		return fmt.Sprintf("APPROXIMATE (not a pass): no --max-error (the file records %g, not used)", c.RecordedBound)
	case c.Verdict == validate.Approximate:
		return "APPROXIMATE (not a pass): no --max-error"
	case c.Approximate && m.Pass:
		return fmt.Sprintf("approximate: ok (max error %g, %s)", m.Atol, c.BoundFrom)
	case c.Approximate:
		return fmt.Sprintf("FAIL (max error %g, %s)", m.Atol, c.BoundFrom)
	case !m.Pass:
		return fmt.Sprintf("FAIL (atol %.g)", m.Atol)
	}
	return "ok"
}

// writeCases says which inputs ran: one line when every check ran the
// same cases, else one per check.
func writeCases(w io.Writer, checks []validate.Check) {
	var lists []string
	for _, c := range checks {
		if len(c.Cases) > 0 {
			lists = append(lists, strings.Join(c.Cases, ", "))
		}
	}
	if len(lists) == 0 {
		return
	}
	if slices.Equal(lists, slices.Repeat(lists[:1], len(lists))) {
		fmt.Fprintf(w, "cases: %s\n", lists[0])
		return
	}
	for _, c := range checks {
		if len(c.Cases) > 0 {
			fmt.Fprintf(w, "%s: cases: %s\n", c.Name, strings.Join(c.Cases, ", "))
		}
	}
}

// cosineText prints a cosine, or - where it is undefined (a side all
// zeros).
func cosineText(c *float64) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.6f", *c)
}

func nonFinite(m validate.Metrics) string {
	if m.Lost > 0 {
		return fmt.Sprintf("%d (%d lost)", m.NaNs, m.Lost)
	}
	return fmt.Sprint(m.NaNs)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
