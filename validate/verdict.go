package validate

import "fmt"

// Verdict is the outcome of one check or of a whole validation. Verdicts
// are ordered by severity: a report takes the worst of its checks'.
type Verdict int

const (
	// Pass: every output within tolerance (exact sites).
	Pass Verdict = iota
	// WithinBound: an approximate site whose error is within --max-error
	// (never a bound the file records); a pass.
	WithinBound
	// NoChecks: nothing was compared (no rewritten site).
	NoChecks
	// CannotCheck: the runtime cannot run an op of the check.
	CannotCheck
	// Approximate: an approximate site with no bound to judge its
	// error against; not a pass.
	Approximate
	// Fail: an output outside tolerance or bound, or a check that could
	// not be carried out for a reason that is the rewrite's.
	Fail
)

var verdictNames = [...]struct{ check, report, json string }{
	Pass:        {"ok", "PASS", "pass"},
	WithinBound: {"approximate: within bound", "PASS", "within_bound"},
	NoChecks:    {"NO CHECKS", "NO CHECKS", "no_checks"},
	CannotCheck: {"CANNOT CHECK", "CANNOT CHECK", "cannot_check"},
	Approximate: {"APPROXIMATE (not a pass)", "APPROXIMATE (not a pass)", "approximate"},
	Fail:        {"FAIL", "FAIL", "fail"},
}

// String is how a check's verdict is printed.
func (v Verdict) String() string {
	if v < 0 || int(v) >= len(verdictNames) {
		return fmt.Sprintf("Verdict(%d)", int(v))
	}
	return verdictNames[v].check
}

// ReportString is how a whole validation's verdict is printed.
func (v Verdict) ReportString() string {
	if v < 0 || int(v) >= len(verdictNames) {
		return v.String()
	}
	return verdictNames[v].report
}

// MarshalText writes the JSON form (pass, within_bound, no_checks,
// cannot_check, approximate, fail).
func (v Verdict) MarshalText() ([]byte, error) {
	if v < 0 || int(v) >= len(verdictNames) {
		return nil, fmt.Errorf("unknown verdict %d", int(v))
	}
	return []byte(verdictNames[v].json), nil
}

// Passed: the verdict lets a validation pass.
func (v Verdict) Passed() bool { return v == Pass || v == WithinBound }

// combine is the verdict of a report from its checks' verdicts.
func combine(checks []Check) Verdict {
	if len(checks) == 0 {
		return NoChecks
	}
	worst := Pass
	for _, c := range checks {
		if c.Verdict > worst {
			worst = c.Verdict
		}
	}
	if worst == WithinBound {
		return Pass
	}
	return worst
}
