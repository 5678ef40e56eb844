package validate

import (
	"errors"
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
	// pooled). Without it such a site is Approximate, whatever bound its
	// rewrite recorded (passes/plan/meta.go): the bound comes from the user.
	MaxError float64
	// Inputs are the user's own values of the original's graph inputs
	// (--inputs FILE.npz, named InputsName in reports), run as one more
	// case wherever they apply: the whole model, and full-size sites,
	// whose inputs the original computes from them.
	Inputs     map[string]*eval.Tensor
	InputsName string
	Progress   func(done, total int, what string)
}

// Check is the comparison of one site (or of the whole model).
type Check struct {
	Name    string    `json:"name"`
	SiteID  *int      `json:"site,omitempty"`
	Reduced string    `json:"reduced,omitempty"` // what was reduced and why
	Cases   []string  `json:"cases"`             // the inputs it ran, in order
	Outputs []Metrics `json:"outputs"`
	// Approximate marks a windowed or pooled site, recognised from its
	// ops: its error is the approximation's, judged against Bound (from
	// --max-error: BoundFrom) rather than the tolerances.
	Approximate bool    `json:"approximate,omitempty"`
	Bound       float64 `json:"bound,omitempty"`
	BoundFrom   string  `json:"bound_from,omitempty"`
	Verdict     Verdict `json:"verdict"`
	Pass        bool    `json:"pass"`
	Error       string  `json:"error,omitempty"`
	// Covers are the IDs of the sites a check of one subgraph compares
	// (nested.go), which its name also lists; reports attach it to them.
	Covers []int `json:"-"`

	// RecordedBound is the attnopt.max_error the file records: shown,
	// never used for the verdict (approxVerdict).
	RecordedBound float64 `json:"recorded_bound,omitempty"`
}

// Report is the result of validating a rewrite.
type Report struct {
	Original  string  `json:"original"`
	Rewritten string  `json:"rewritten"`
	Runtime   string  `json:"runtime"`
	Scope     string  `json:"scope"`
	Seed      int64   `json:"seed"`
	Checks    []Check `json:"checks"`
	Verdict   Verdict `json:"verdict"`
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
	rep := &Report{Runtime: r.Name(), Scope: opts.Scope, Seed: opts.Seed}
	if opts.Scope == "model" {
		c := Check{Name: "model"}
		if err := CheckModelScope(orig, opts.Dims); err != nil {
			c.Error = "original: " + err.Error()
		} else if err := CheckModelScope(rew, opts.Dims); err != nil {
			c.Error = "rewrite: " + err.Error()
		} else {
			c = compareModels(pair{name: "model", a: orig, b: rew, user: true}, r, opts)
			if approximatedModel(orig, rew) {
				// Per-site recorded bounds do not bound the model's
				// output: only --max-error gates it.
				approxVerdict(&c, opts, 0)
			}
		}
		rep.Checks = []Check{settle(c)}
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
		rep.Checks = append(rep.Checks, settle(Check{Name: "outside the sites", Error: msg}))
	}
	if len(rep.Checks) == 0 {
		rep.Checks, rep.NoChecks = []Check{}, true
	}
	rep.Verdict = combine(rep.Checks)
	rep.Pass = rep.Verdict.Passed()
	return rep
}

// settle gives a check built without a verdict its verdict: Fail on an
// error, else by its outputs. Checks that already have one keep it.
func settle(c Check) Check {
	if c.Verdict == Pass {
		if c.Error != "" {
			c.Verdict = Fail
		}
		for _, m := range c.Outputs {
			if !m.Pass && !c.Approximate {
				c.Verdict = Fail
			}
		}
	}
	if c.Cases == nil {
		c.Cases = []string{}
	}
	c.Pass = c.Verdict.Passed()
	return c
}

// pair is one comparison: b computes what a computes (b's output
// bNames[i] for a's i-th output; nil: the same names).
type pair struct {
	name   string
	a, b   *graph.Model
	bNames []string
	// src is the model a was extracted from, which an additive mask input
	// of a takes its fill from; nil when a is a whole model.
	src *graph.Model
	// user: the --inputs case applies (a is the original, or part of it at
	// full size, whose inputs the original computes from the user's).
	user bool
}

// compareModels runs a and b on each case's inputs and keeps, per output,
// the worst case's figures.
func compareModels(p pair, r Runner, opts Options) Check {
	c := Check{Name: p.name, Cases: []string{}}
	rolesA := inputRoles(p.a, p.src, opts.Dims)
	rolesB := inputRoles(p.b, nil, opts.Dims)
	cases := casesFor(rolesA, rolesB)
	if p.user && opts.Inputs != nil {
		cases = append([]caseKind{caseUser}, cases...)
	}
	for _, k := range cases {
		name := k.String()
		var in map[string]*eval.Tensor
		var err error
		if k == caseUser {
			name = "inputs " + opts.InputsName
			in, err = userValues(p, r, opts)
		} else {
			in, err = genInputs(p.a, rolesA, k, opts.Seed, opts.Dims)
		}
		if err == nil {
			// b may read inputs a does not (a rewrite that reads further up).
			var extra map[string]*eval.Tensor
			gen := k
			if gen == caseUser {
				gen = caseRandom
			}
			if extra, err = genInputs(p.b, rolesB, gen, opts.Seed+1, opts.Dims); err == nil {
				for n, v := range extra {
					if in[n] == nil {
						in[n] = v
					}
				}
			}
		}
		c.Cases = append(c.Cases, name)
		if err != nil {
			c.Error = err.Error()
			return settle(c)
		}
		outs, err := runPair(p, in, r, opts)
		if err != nil {
			c.Error = err.Error()
			if len(cases) > 1 {
				c.Error += " (case " + name + ")"
			}
			if errors.As(err, new(*UnsupportedError)) || errors.As(err, new(*originalError)) {
				c.Verdict = CannotCheck
			}
			return settle(c)
		}
		for i := range outs {
			outs[i].Case = name
			if i >= len(c.Outputs) {
				c.Outputs = append(c.Outputs, outs[i])
			} else if worse(outs[i], c.Outputs[i]) {
				c.Outputs[i] = outs[i]
			}
		}
	}
	return settle(c)
}

// worse: m is a worse result than n (failing, then non-finite, then
// larger error).
func worse(m, n Metrics) bool {
	if m.Pass != n.Pass {
		return !m.Pass
	}
	if bad, nbad := m.NaNs+m.Lost > 0, n.NaNs+n.Lost > 0; bad != nbad {
		return bad
	}
	return m.MaxAbs > n.MaxAbs
}

// originalError: the original itself did not run on the generated inputs,
// a limit of the checker (its inputs or runtime), never the rewrite's fault.
type originalError struct{ err error }

func (e *originalError) Error() string { return "original: " + e.err.Error() }
func (e *originalError) Unwrap() error { return e.err }

// runPair runs both sides on one case's inputs and compares each output.
func runPair(p pair, in map[string]*eval.Tensor, r Runner, opts Options) ([]Metrics, error) {
	want, err := r.Run(p.a, pick(in, p.a))
	if err != nil {
		return nil, &originalError{err}
	}
	got, err := r.Run(p.b, pick(in, p.b))
	if err != nil {
		return nil, fmt.Errorf("rewrite: %w", err)
	}
	var out []Metrics
	for i, o := range p.a.Graph.Outputs {
		bn := o.Name
		if p.bNames != nil {
			bn = p.bNames[i]
		}
		atol, rtol := opts.Atol, opts.Rtol
		if atol == 0 {
			atol, rtol = Tolerance(precision(p.a, o.Type.DType)), 0
		}
		if want[o.Name] == nil || got[bn] == nil {
			return nil, fmt.Errorf("output %q missing", o.Name)
		}
		m, err := Compare(o.Name, want[o.Name], got[bn], atol, rtol)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
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
