package report

import (
	"fmt"
	"io"

	"github.com/attnopt/attnopt/validate"
)

// WriteValidation prints a validation report as an aligned table.
func WriteValidation(w io.Writer, r *validate.Report) { WriteValidationTable(w, r, true) }

// WriteValidationTable prints a validation report, its table aligned (for
// a terminal) or tab-separated, one row a line (for pipes and files).
func WriteValidationTable(w io.Writer, r *validate.Report, aligned bool) {
	fmt.Fprintf(w, "validate %s against %s (runtime %s, scope %s, seed %d)\n", r.Rewritten, r.Original, r.Runtime, r.Scope, r.Seed)
	if r.NoChecks {
		fmt.Fprintln(w, "NO CHECKS: no attention site of the original was rewritten, so nothing was compared (--scope model compares the whole models)")
		return
	}
	tw := tableWriter(w, aligned)
	fmt.Fprintln(tw, "CHECK\tOUTPUT\tMAX ABS\tMAX REL\tMEAN ABS\tCOSINE\tWORST AT\tNaN/Inf\tVERDICT")
	for _, c := range r.Checks {
		if c.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\tERROR: %s\n", c.Name, c.Error)
			continue
		}
		for _, m := range c.Outputs {
			verdict := "ok"
			switch {
			case c.Approximate && m.Pass && m.Atol == 0:
				verdict = "approximate: error measured"
			case c.Approximate && m.Pass:
				verdict = fmt.Sprintf("approximate: ok (max error %g)", m.Atol)
			case c.Approximate:
				verdict = fmt.Sprintf("FAIL (max error %g)", m.Atol)
			case !m.Pass:
				verdict = fmt.Sprintf("FAIL (atol %.g)", m.Atol)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3g\t%.3g\t%.3g\t%.6f\t%v\t%d\t%s\n", c.Name, m.Output, m.MaxAbs, m.MaxRel, m.MeanAbs, m.Cosine, m.WorstIndex, m.NaNs, verdict)
		}
	}
	tw.Flush()
	for _, c := range r.Checks {
		if c.Reduced != "" {
			fmt.Fprintf(w, "%s: %s\n", c.Name, c.Reduced)
		}
	}
	if r.Pass {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}
