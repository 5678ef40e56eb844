package main

import (
	"fmt"
	"io"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/units"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
	"github.com/spf13/cobra"
)

// approxFlags are rewrite's opt-in approximations (docs/design.md §5).
type approxFlags struct {
	window, shift, grid string
	pool, upsample      string
	stride              int64
	budget              string
	allow               bool
	maxError            float64
}

func (a *approxFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&a.window, "window", "", "windowed attention over the token grid, e.g. 8x8x8 (approximate)")
	c.Flags().StringVar(&a.shift, "shift", "", "cyclic shift of the windows, e.g. 4x4x4")
	c.Flags().StringVar(&a.pool, "pool", "", "kv: average-pool K and V; qkv: pool Q, K, V and upsample the output (approximate)")
	c.Flags().Int64Var(&a.stride, "stride", 2, "pool stride per grid axis")
	c.Flags().StringVar(&a.upsample, "upsample", "nearest", "upsampling after --pool qkv: nearest or linear")
	c.Flags().StringVar(&a.grid, "grid", "", "token grid when tracing cannot prove it, e.g. 128x128x128")
	c.Flags().StringVar(&a.budget, "memory-budget", "", "per-site memory budget, e.g. 16GiB: exact fusion where it fits")
	c.Flags().BoolVar(&a.allow, "allow-approx", false, "let sites whose fused op exceeds the budget take the least lossy approximation that fits")
	c.Flags().Float64Var(&a.maxError, "max-error", 0, "largest max abs error an approximate site may have; backs off toward exact until it holds")
}

func (a *approxFlags) options() (passes.ApproxOptions, error) {
	var o passes.ApproxOptions
	var err error
	if a.window != "" {
		if o.Window, err = units.ParseDims(a.window); err != nil {
			return o, usageError{fmt.Errorf("--window %w", err)}
		}
	}
	if a.shift != "" {
		if o.Shift, err = units.ParseDims(a.shift); err != nil {
			return o, usageError{fmt.Errorf("--shift %w", err)}
		}
	}
	if a.grid != "" {
		if o.Grid, err = units.ParseDims(a.grid); err != nil {
			return o, usageError{fmt.Errorf("--grid %w", err)}
		}
	}
	switch a.pool {
	case "", "kv", "qkv":
		o.Pool = a.pool
	default:
		return o, usageError{fmt.Errorf("--pool %q: want kv or qkv", a.pool)}
	}
	if a.window != "" && a.pool != "" {
		return o, usageError{fmt.Errorf("--window and --pool are alternatives; give one")}
	}
	if a.upsample != "nearest" && a.upsample != "linear" {
		return o, usageError{fmt.Errorf("--upsample %q: want nearest or linear", a.upsample)}
	}
	o.Stride, o.Upsample = a.stride, a.upsample
	if a.budget != "" {
		if o.MemoryBudget, err = units.ParseSize(a.budget); err != nil {
			return o, usageError{fmt.Errorf("--memory-budget: %w", err)}
		}
	}
	o.AllowApprox = a.allow
	return o, nil
}

// hasApprox reports whether the rewrite approximated any site.
func hasApprox(c *passes.Context) bool {
	for _, a := range c.Actions {
		if a.Fused && a.Plan != nil && a.Plan.Approximate() {
			return true
		}
	}
	return false
}

// writePlans prints, per site, the plan with its memory before and after.
func writePlans(w io.Writer, c *passes.Context, budgeted bool) {
	for _, a := range c.Actions {
		p := a.Plan
		if p == nil || (!p.Approximate() && !budgeted && p.Reason == "") {
			continue
		}
		before, after := p.BytesBefore, p.BytesAfter
		fmt.Fprintf(w, "  site %d plan: %s; memory %s (scores) → %s", a.Site.ID, p.String(), human(before), human(after))
		if p.Reason != "" {
			fmt.Fprintf(w, " — %s", p.Reason)
		}
		if p.Approximate() && !a.Fused {
			fmt.Fprint(w, "; not applied (the site is left as is)")
		}
		fmt.Fprintln(w)
	}
}

// human prints a plan's byte count; negative means unknown.
func human(b int64) string {
	if b < 0 {
		return "?"
	}
	return units.FormatBytes(b)
}

// backOff implements --max-error: for each approximate site it measures the
// error at a length where the original runs and, while it exceeds the bound,
// doubles the window or halves the stride; a site that only exact attention
// satisfies is fused exactly ("refused").
func backOff(o *rewriteOptions, base passes.ApproxOptions, pins graph.Pins) (passes.ApproxOptions, []string, error) {
	var notes []string
	plans := map[int]*passes.Plan{}
	// Validation only reads the original, so one load serves every round.
	orig, err := loadModel(o.model, &o.pins, o.prog)
	if err != nil {
		return base, nil, err
	}
	for round := 0; round < 8; round++ {
		opts := base
		opts.SitePlans = plans
		rew, err := loadModel(o.model, &o.pins, o.prog)
		if err != nil {
			return base, nil, err
		}
		ctx, err := passes.Rewrite(rew, passes.Options{Target: o.target, Approx: opts})
		if err != nil {
			return base, nil, err
		}
		rep := validate.Validate(orig, reload(rew), validate.GoRunner{}, validate.Options{Seed: 1, Dims: pins.Dims, MaxError: o.approx.maxError})
		changed := false
		for _, a := range ctx.Actions {
			if a.Plan == nil || !a.Plan.Approximate() || !a.Fused {
				continue
			}
			err := siteError(rep, a.Site.ID)
			if err <= o.approx.maxError {
				// Recorded on the fused node, so validate accepts the
				// site under the bound it was measured against.
				met := *a.Plan
				met.MaxError = o.approx.maxError
				plans[a.Site.ID] = &met
				continue
			}
			next := relax(a.Plan)
			notes = append(notes, fmt.Sprintf("site %d: %s has max abs error %.3g > %g; trying %s", a.Site.ID, a.Plan, err, o.approx.maxError, next))
			plans[a.Site.ID] = next
			changed = true
		}
		if !changed {
			base.SitePlans = plans
			return base, notes, nil
		}
	}
	base.SitePlans = plans
	return base, notes, nil
}

func reload(m *graph.Model) *graph.Model {
	data, err := m.Marshal()
	if err != nil {
		return m
	}
	r, err := graph.LoadBytes(data, "")
	if err != nil {
		return m
	}
	return r
}

// siteError is the max abs error measured for a site (+Inf if unmeasured).
func siteError(rep *validate.Report, id int) float64 {
	worst := -1.0
	for _, c := range rep.Checks {
		if c.SiteID == nil || *c.SiteID != id {
			continue
		}
		if c.Error != "" {
			return 1e300
		}
		for _, m := range c.Outputs {
			worst = max(worst, m.MaxAbs)
		}
	}
	if worst < 0 {
		return 1e300
	}
	return worst
}

// relax moves a plan one step toward exact attention.
func relax(p *passes.Plan) *passes.Plan {
	q := *p
	switch p.Kind {
	case passes.PlanWindow:
		q.Window = append([]int64(nil), p.Window...)
		full := true
		for i := range q.Window {
			q.Window[i] = min(2*q.Window[i], p.Grid.Dims[i])
			full = full && q.Window[i] == p.Grid.Dims[i]
		}
		if !full {
			return &q
		}
	case passes.PlanPoolKV, passes.PlanPoolQKV:
		if p.Stride > 2 {
			q.Stride = p.Stride / 2
			return &q
		}
	}
	return &passes.Plan{Kind: passes.PlanExact, BytesBefore: p.BytesBefore, BytesAfter: -1, Reason: "approximation refused: no window or stride met --max-error"}
}
