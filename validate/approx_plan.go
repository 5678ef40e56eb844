package validate

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/internal/units"
	"github.com/attnopt/attnopt/passes"
)

// sitePlan is what a rewritten site computes, read from its ops: nil
// approx for exact attention. The plan the file records (metadata_props)
// must agree with it; it never decides the verdict.
type sitePlan struct {
	kind   passes.PlanKind
	approx *passes.ApproxOptions
	grid   []int64
	// bound is the --max-error the rewrite recorded for the site (0: none).
	bound float64
}

// maxAxis bounds every grid, window, shift and stride read from a file
// before any arithmetic uses it; maxCells bounds a grid's product.
const (
	maxAxis  = 1 << 31
	maxCells = 1 << 40
)

// planOf recognises the site's plan from the rewrite's nodes between repl
// and the values both models compute alike: attnopt.WindowAttention and its
// attributes, or AveragePool (and Resize for Q, K, V pooled); anything else
// is exact attention (FlashAttention, MultiHeadAttention, GroupQueryAttention,
// Attention), whatever its metadata says.
func planOf(s *passes.Site, repl *graph.Value, orig, rew *graph.Model) (sitePlan, error) {
	var win, pools, resizes []*graph.Node
	for _, n := range coneOf(repl, frontier(rew, orig)) {
		switch {
		case n.Domain == "attnopt" && n.OpType == "WindowAttention":
			win = append(win, n)
		case n.Is("AveragePool"):
			pools = append(pools, n)
		case n.Is("Resize"):
			resizes = append(resizes, n)
		}
	}
	p := sitePlan{kind: passes.PlanExact}
	switch {
	case len(win) > 1:
		return p, fmt.Errorf("the rewritten site holds %d WindowAttention nodes; a window plan has one", len(win))
	case len(win) == 1:
		// Read through the op's table, as the kernels read it: an absent
		// shift is zeros (docs/ops.md), and a value out of range is refused.
		w := win[0]
		a, err := opdef.ReadWindowAttention(w)
		if err != nil {
			return p, fmt.Errorf("node %q (WindowAttention): %w", w.Label(), err)
		}
		p.kind, p.grid = passes.PlanWindow, a.SpatialShape
		p.approx = &passes.ApproxOptions{Window: a.Window, Shift: a.Shift}
		if err := checkAxes(w, p.grid, p.approx.Window, p.approx.Shift); err != nil {
			return p, err
		}
	case len(pools) > 0:
		p.kind = passes.PlanPoolKV
		p.approx = &passes.ApproxOptions{Pool: "kv"}
		if len(resizes) > 0 {
			p.kind, p.approx.Pool = passes.PlanPoolQKV, "qkv"
			p.approx.Upsample = resizes[0].AttrString("mode", "nearest")
		}
		for _, n := range pools {
			st := n.AttrInts("strides")
			if len(st) == 0 || st[0] < 1 || st[0] >= maxAxis || slices.ContainsFunc(st, func(x int64) bool { return x != st[0] }) {
				return p, fmt.Errorf("node %q (AveragePool): strides %v are not one stride per grid axis", n.Label(), st)
			}
			if p.approx.Stride != 0 && p.approx.Stride != st[0] {
				return p, fmt.Errorf("the rewritten site pools with strides %d and %d; a pool plan has one", p.approx.Stride, st[0])
			}
			p.approx.Stride = st[0]
		}
	}
	if err := p.agree(s, rew); err != nil {
		return p, err
	}
	if p.approx != nil {
		if err := checkGrid(s, p); err != nil {
			return p, err
		}
		p.judgeAsExact(s)
	}
	return p, nil
}

// judgeAsExact: an approximation of a masked or causal site drops the
// site's mask (a rewrite never plans one there: passes/plan/plan.go's
// approxApplies), and a window that covers the whole grid approximates
// nothing; either is judged as the exact site it replaced, at the exact
// tolerances, so a file cannot turn an exact site into an approximate one
// judged by a looser bound (issue 34).
func (p *sitePlan) judgeAsExact(s *passes.Site) {
	if (p.kind == passes.PlanWindow && wholeGrid(p.approx.Window, p.grid)) || len(s.Masks) > 0 || s.Causal {
		p.approx = nil
	}
}

// wholeGrid: a window at least as large as the grid on every axis, so every
// query sees every key (whatever the shift): exact attention.
func wholeGrid(window, grid []int64) bool {
	if len(window) != len(grid) {
		return false
	}
	for i := range grid {
		if window[i] < grid[i] {
			return false
		}
	}
	return true
}

// agree checks the plan the file records for site s against what its ops
// compute, and takes the recorded --max-error of an approximate plan.
func (p *sitePlan) agree(s *passes.Site, rew *graph.Model) error {
	for _, n := range rew.Graph.Nodes {
		if id, ok := passes.SiteOf(n); !ok || id != s.ID {
			continue
		}
		kind, rec, grid, _ := passes.RecordedPlan(n)
		if kind == "" {
			kind = passes.PlanExact
		}
		if kind != p.kind {
			return fmt.Errorf("node %q records plan %q for site %d, but the site computes %s", n.Label(), kind, s.ID, p.describe())
		}
		if p.approx == nil {
			continue
		}
		switch {
		case p.kind == passes.PlanWindow && (!slices.Equal(grid, p.grid) || !slices.Equal(rec.Window, p.approx.Window) || !slices.Equal(rec.Shift, p.approx.Shift)):
			return fmt.Errorf("node %q records grid %q, window %q, shift %q, but its WindowAttention has spatial_shape %s, window %s, shift %s",
				n.Label(), n.Meta("attnopt.grid"), n.Meta("attnopt.window"), n.Meta("attnopt.shift"), dims(p.grid), dims(p.approx.Window), dims(p.approx.Shift))
		case p.kind != passes.PlanWindow && rec.Stride != p.approx.Stride:
			return fmt.Errorf("node %q records stride %q, but the site pools with stride %d", n.Label(), n.Meta("attnopt.stride"), p.approx.Stride)
		case p.kind == passes.PlanPoolQKV && rec.Upsample != p.approx.Upsample:
			return fmt.Errorf("node %q records upsample %q, but the site's Resize is %q", n.Label(), rec.Upsample, p.approx.Upsample)
		}
		if p.kind != passes.PlanWindow {
			p.grid = grid // pooling keeps its grid in Reshape targets: the record's, range-checked
		}
		if b := n.Meta(passes.MetaMaxError); b != "" {
			x, err := strconv.ParseFloat(b, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
				return fmt.Errorf("node %q records %s %q, which is not a positive finite number", n.Label(), passes.MetaMaxError, b)
			}
			p.bound = x
		}
	}
	return nil
}

func (p *sitePlan) describe() string {
	if p.approx == nil {
		return "exact attention"
	}
	return fmt.Sprintf("%s (from its ops)", p.kind)
}

func dims(ds []int64) string {
	if len(ds) == 0 {
		return "none"
	}
	return units.FormatDims(ds)
}

// checkAxes range-checks WindowAttention's attributes.
func checkAxes(n *graph.Node, grid, window, shift []int64) error {
	if len(grid) == 0 || len(window) != len(grid) || (len(shift) != 0 && len(shift) != len(grid)) {
		return fmt.Errorf("node %q (WindowAttention): spatial_shape %v, window %v and shift %v do not have one entry per grid axis", n.Label(), grid, window, shift)
	}
	for i := range grid {
		if grid[i] < 1 || grid[i] >= maxAxis || window[i] < 1 || window[i] >= maxAxis {
			return fmt.Errorf("node %q (WindowAttention): spatial_shape %v or window %v out of range [1, 2^31)", n.Label(), grid, window)
		}
		if len(shift) > 0 && (shift[i] < 0 || shift[i] >= maxAxis) {
			return fmt.Errorf("node %q (WindowAttention): shift %v out of range [0, 2^31)", n.Label(), shift)
		}
	}
	return nil
}

// checkGrid: the plan's grid has sane axes and as many cells as the site
// has keys.
func checkGrid(s *passes.Site, p sitePlan) error {
	cells := int64(1)
	for _, g := range p.grid {
		if g < 1 || g >= maxAxis {
			return fmt.Errorf("site %d: grid %v has an axis out of range [1, 2^31)", s.ID, p.grid)
		}
		if cells = mulSat(cells, g); cells < 0 || cells > maxCells {
			return fmt.Errorf("site %d: grid %v has more than 2^40 cells", s.ID, p.grid)
		}
	}
	if len(p.grid) == 0 {
		return fmt.Errorf("site %d: the %s plan records no grid", s.ID, p.kind)
	}
	if n, ok := s.KVLen.Value(); ok && cells != n {
		return fmt.Errorf("site %d: grid %s has %d cells, but the site has %d keys", s.ID, units.FormatDims(p.grid), cells, n)
	}
	return nil
}

// coneOf lists the nodes computing v back to the values stop accepts.
func coneOf(v *graph.Value, stop func(*graph.Value) bool) []*graph.Node {
	seen := map[*graph.Value]bool{}
	took := map[*graph.Node]bool{}
	var out []*graph.Node
	stack := []*graph.Value{v}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == nil || seen[v] || v.Kind != graph.KindNode || stop(v) {
			continue
		}
		seen[v] = true
		p := v.Producer()
		if p == nil || took[p] {
			continue
		}
		took[p] = true
		out = append(out, p)
		stack = append(stack, p.Inputs...)
	}
	return out
}

// approximatedModel: the rewrite approximates somewhere, by its ops.
func approximatedModel(orig, rew *graph.Model) bool {
	count := func(m *graph.Model) (win, pool int) {
		for _, n := range m.Graph.Nodes {
			switch {
			case n.Domain == "attnopt" && n.OpType == "WindowAttention" && !wholeGrid(n.AttrInts("window"), n.AttrInts("spatial_shape")):
				win++ // a whole-grid window approximates nothing: judged exact
			case n.Is("AveragePool") || n.Is("Resize"):
				pool++
			}
		}
		return
	}
	w0, p0 := count(orig)
	w1, p1 := count(rew)
	return w1 > w0 || p1 > p0
}
