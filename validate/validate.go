package validate

import (
	"fmt"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// Options configure a validation.
type Options struct {
	Scope string // "sites" or "model"
	Seed  int64
	// Atol and Rtol override the per-dtype defaults when Atol > 0.
	Atol, Rtol float64
	Dims       map[string]int64
	// MaxScoreBytes is the largest score tensor a site is run with at full
	// size; larger sites run at reduced lengths (default 256 MiB).
	MaxScoreBytes int64
	// MaxError bounds the max abs error of approximate sites (windowed or
	// pooled); 0 reports their error without a verdict.
	MaxError float64
	Progress func(done, total int, what string)
}

// Check is the comparison of one site (or of the whole model).
type Check struct {
	Name    string    `json:"name"`
	SiteID  *int      `json:"site,omitempty"`
	Reduced string    `json:"reduced,omitempty"` // what was reduced and why
	Outputs []Metrics `json:"outputs"`
	// Approximate marks a windowed or pooled site: its error is the
	// approximation's, judged by --max-error rather than the tolerances.
	Approximate bool   `json:"approximate,omitempty"`
	Pass        bool   `json:"pass"`
	Error       string `json:"error,omitempty"`
}

// Report is the result of validating a rewrite.
type Report struct {
	Original  string  `json:"original"`
	Rewritten string  `json:"rewritten"`
	Runtime   string  `json:"runtime"`
	Scope     string  `json:"scope"`
	Seed      int64   `json:"seed"`
	Checks    []Check `json:"checks"`
	Pass      bool    `json:"pass"`
	// NoChecks marks a sites-scope validation that found no rewritten site
	// to compare: not a pass (cmd/attnopt exits 3).
	NoChecks bool `json:"no_checks,omitempty"`
}

// Validate compares orig and rew with the runner.
func Validate(orig, rew *graph.Model, r Runner, opts Options) *Report {
	if opts.Scope == "" {
		opts.Scope = "sites"
	}
	if opts.MaxScoreBytes == 0 {
		opts.MaxScoreBytes = 256 << 20
	}
	rep := &Report{Runtime: r.Name(), Scope: opts.Scope, Seed: opts.Seed, Pass: true}
	if opts.Scope == "model" {
		c := Check{Name: "model"}
		if err := CheckModelScope(orig, opts.Dims); err != nil {
			c.Error = "original: " + err.Error()
		} else if err := CheckModelScope(rew, opts.Dims); err != nil {
			c.Error = "rewrite: " + err.Error()
		} else {
			c = compareModels("model", orig, rew, nil, r, opts)
		}
		rep.Checks = []Check{c}
	} else {
		rep.Checks = validateSites(orig, rew, r, opts)
	}
	nested, checked := nestedChecks(orig, rew, r, opts)
	rep.Checks = append(rep.Checks, nested...)
	// Silent when nothing changed, so reports keep one row per site.
	if diffs := untouchedChanges(orig, rew, checked); len(diffs) > 0 {
		msg := diffs[0]
		if len(diffs) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(diffs)-1)
		}
		rep.Checks = append(rep.Checks, Check{Name: "outside the sites", Error: msg})
	}
	for _, c := range rep.Checks {
		rep.Pass = rep.Pass && c.Pass
	}
	if len(rep.Checks) == 0 {
		rep.Checks, rep.Pass, rep.NoChecks = []Check{}, false, true
	}
	return rep
}

// compareModels runs a and b on the same seeded inputs and compares the
// outputs pairwise (names[i] of b against a's i-th output; nil: same names).
func compareModels(name string, a, b *graph.Model, bNames []string, r Runner, opts Options) Check {
	c := Check{Name: name}
	in, err := RandomInputs(a, opts.Seed, opts.Dims)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	// b may read inputs a does not (a rewrite that reads further up).
	extra, err := RandomInputs(b, opts.Seed+1, opts.Dims)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	for k, v := range extra {
		if in[k] == nil {
			in[k] = v
		}
	}
	want, err := r.Run(a, pick(in, a))
	if err != nil {
		c.Error = "original: " + err.Error()
		return c
	}
	got, err := r.Run(b, pick(in, b))
	if err != nil {
		c.Error = "rewrite: " + err.Error()
		return c
	}
	c.Pass = true
	for i, o := range a.Graph.Outputs {
		bn := o.Name
		if bNames != nil {
			bn = bNames[i]
		}
		atol, rtol := opts.Atol, opts.Rtol
		if atol == 0 {
			atol, rtol = Tolerance(precision(a, o.Type.DType)), 0
		}
		if want[o.Name] == nil || got[bn] == nil {
			c.Error, c.Pass = fmt.Sprintf("output %q missing", o.Name), false
			continue
		}
		m, err := Compare(o.Name, want[o.Name], got[bn], atol, rtol)
		if err != nil {
			c.Error, c.Pass = err.Error(), false
			continue
		}
		c.Outputs = append(c.Outputs, m)
		c.Pass = c.Pass && m.Pass
	}
	return c
}

func pick(in map[string]*eval.Tensor, m *graph.Model) map[string]*eval.Tensor {
	out := map[string]*eval.Tensor{}
	for _, v := range m.Graph.Inputs {
		out[v.Name] = in[v.Name]
	}
	return out
}

// fusedTarget names the target a rewritten model was made with.
func fusedTarget(m *graph.Model) string {
	for _, n := range m.Graph.Nodes {
		if t := passes.TargetOwning(n); t != "" {
			return t
		}
	}
	return ""
}

// precision is the lowest float precision the computation of an output runs
// at: a float32 output of a model fed fp16 inputs carries fp16 error.
func precision(m *graph.Model, out graph.DType) graph.DType {
	p := out
	for _, v := range m.Graph.Inputs {
		switch v.Type.DType {
		case graph.BFloat16:
			p = graph.BFloat16
		case graph.Float16:
			if p != graph.BFloat16 {
				p = graph.Float16
			}
		}
	}
	return p
}
