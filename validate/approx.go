package validate

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

// approxVerdict judges an approximate site by its error against the
// original: within the user's --max-error it passes (WithinBound); above
// it, it fails; without --max-error it is Approximate, which is not a pass.
// The bound the rewrite recorded in the file (attnopt.max_error) is kept
// as information only: a number in the file never widens a verdict
// (issue 34). A check that could not run keeps its verdict.
func approxVerdict(c *Check, opts Options, recorded float64) {
	c.Approximate = true
	c.RecordedBound = recorded
	if c.Error != "" {
		return
	}
	bound := opts.MaxError
	c.Verdict = Approximate
	if bound > 0 {
		c.Verdict, c.Bound, c.BoundFrom = WithinBound, bound, "--max-error"
	}
	for i := range c.Outputs {
		m := &c.Outputs[i]
		m.Atol, m.Rtol = bound, 0
		m.Pass = bound > 0 && m.MaxAbs <= bound && m.NaNs == 0
		if bound > 0 && !m.Pass {
			c.Verdict = Fail
		}
	}
	c.Pass = c.Verdict.Passed()
}
