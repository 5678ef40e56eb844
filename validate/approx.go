package validate

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// approxOf reads the approximation a rewrite applied to site id from what
// it recorded on the site's fused node (passes.RecordedPlan); nil for an
// exact site.
func approxOf(rew *graph.Model, id int) (*passes.ApproxOptions, []int64) {
	for _, n := range rew.Graph.Nodes {
		if got, ok := passes.SiteOf(n); !ok || got != id {
			continue
		}
		if _, a, grid, _ := passes.RecordedPlan(n); a != nil {
			return a, grid
		}
	}
	return nil, nil
}

// reduceGrid halves the largest axis until the grid holds at most max
// cells. The reduced grid depends only on the full one, so errors of
// different windows and strides are measured on the same grid and compare;
// windows larger than an axis shrink to it. Fewer keys lie outside a window
// on a reduced grid, so the error there understates the full-size error.
func reduceGrid(grid []int64, max int64) []int64 {
	out := append([]int64(nil), grid...)
	for prodOf(out) > max {
		big := 0
		for i := range out {
			if out[i] > out[big] {
				big = i
			}
		}
		if out[big] < 2 {
			break
		}
		out[big] = (out[big] + 1) / 2
	}
	return out
}

func prodOf(ds []int64) int64 {
	p := int64(1)
	for _, d := range ds {
		p *= d
	}
	return p
}

// approxVerdict applies --max-error to an approximate site: its error is
// measured and reported; it fails only above the given bound.
func approxVerdict(c *Check, opts Options) {
	c.Approximate = true
	c.Pass = c.Error == ""
	for i := range c.Outputs {
		m := &c.Outputs[i]
		m.Pass = opts.MaxError <= 0 || m.MaxAbs <= opts.MaxError
		m.Atol = opts.MaxError
		c.Pass = c.Pass && m.Pass
	}
}
