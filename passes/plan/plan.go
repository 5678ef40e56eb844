// Package plan decides what the rewrite does with each site: exact fusion
// or an opt-in approximation over the site's token grid, by the options
// and the memory budget (Choose, the one place plans are selected), and
// records the choice on the fused node (meta.go). Stage 1 builds every
// plan as canonical ops (passes/canonical).
package plan

import (
	"fmt"
	"github.com/attnopt/attnopt/internal/units"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match"
)

// Plan is what the rewrite does with one site: exact fusion, or an opt-in
// approximation over the site's token grid (docs/design.md §5).
type Plan struct {
	Kind     Kind
	Window   []int64 // per grid axis (window)
	Shift    []int64 // per grid axis (window)
	Stride   int64   // pool stride per axis (pool_kv, pool_qkv)
	Upsample string  // nearest or linear (pool_qkv)
	Grid     *Grid
	// Memory of the naive site (its score tensor) and of the plan's op
	// (docs/design.md §6 with the plan's lengths); -1 when unknown.
	BytesBefore, BytesAfter int64
	Reason                  string
	// MaxError is the --max-error this approximate plan was measured
	// against and met (0: none); it is recorded for validate.
	MaxError float64
}

// Approximate reports whether the plan changes the site's function.
func (p *Plan) Approximate() bool {
	return p.Kind == Window || p.Pooled()
}

// Pooled reports a plan that pools K, V (and Q): the graph then holds the
// pooled tensors too, so its footprint, not what the fused op adds, is the
// memory after it (docs/design.md §6).
func (p *Plan) Pooled() bool {
	return p.Kind == PoolKV || p.Kind == PoolQKV
}

func (p *Plan) String() string {
	switch p.Kind {
	case Window:
		s := "window " + units.FormatDims(p.Window)
		if anyNonZero(p.Shift) {
			s += " shift " + units.FormatDims(p.Shift)
		}
		return s + " over grid " + p.Grid.String()
	case PoolKV:
		return fmt.Sprintf("pool K,V stride %d over grid %s", p.Stride, p.Grid.String())
	case PoolQKV:
		return fmt.Sprintf("pool Q,K,V stride %d over grid %s, %s upsample", p.Stride, p.Grid.String(), p.Upsample)
	}
	return string(p.Kind)
}

func anyNonZero(ds []int64) bool {
	for _, d := range ds {
		if d != 0 {
			return true
		}
	}
	return false
}

// ApproxOptions are the rewrite's approximation settings.
type ApproxOptions struct {
	Window   []int64 // --window
	Shift    []int64 // --shift
	Pool     string  // --pool kv|qkv
	Stride   int64   // --stride
	Upsample string  // --upsample nearest|linear
	Grid     []int64 // --grid: overrides the recovered grid
	// MemoryBudget (bytes, per site; 0 = none) keeps exact fusion where the
	// fused op fits; AllowApprox lets sites that do not fit take the least
	// lossy approximation that fits.
	MemoryBudget int64
	AllowApprox  bool
	// SitePlans fixes the plan of given sites (used by --max-error).
	SitePlans map[int]*Plan
}

// Pooled divides each grid axis by s, rounding up (border windows averaged
// over the cells they hold).
func Pooled(grid []int64, s int64) []int64 {
	out := make([]int64, len(grid))
	for i, g := range grid {
		out[i] = (g + s - 1) / s
	}
	return out
}

func prod(ds []int64) int64 {
	p := int64(1)
	for _, d := range ds {
		p *= d
	}
	return p
}

// planBytes is the fused-op memory of a plan: Q, K, V, O at the plan's
// lengths plus the row statistic, and for pool_qkv the full-size output the
// Resize writes.
func planBytes(s *match.Match, p *Plan) int64 {
	e := int64(s.DType.Bits() / 8)
	b, _ := s.Batch.Value()
	hq, _ := s.Heads.Value()
	hkv, _ := s.KVHeads.Value()
	nq, _ := s.QLen.Value()
	nk, _ := s.KVLen.Value()
	dqk, _ := s.HeadDim.Value()
	dv, _ := s.VHeadDim.Value()
	outFull := int64(0)
	switch p.Kind {
	case PoolKV:
		nk = prod(Pooled(p.Grid.Dims, p.Stride))
	case PoolQKV:
		outFull = e * b * hq * nq * dv
		nq = prod(Pooled(p.Grid.Dims, p.Stride))
		nk = nq
	}
	return e*b*(hq*nq*dqk+hkv*nk*dqk+hkv*nk*dv+hq*nq*dv) + 4*b*hq*nq + outFull
}

// staticSite reports whether every size the planner needs is known.
func staticSite(s *match.Match) bool {
	for _, d := range []graph.Dim{s.Batch, s.Heads, s.KVHeads, s.QLen, s.KVLen, s.HeadDim, s.VHeadDim} {
		if !d.Static() {
			return false
		}
	}
	return true
}

// BelowMinScores says why an exact site is left alone under --min-scores:
// its score tensor is known and smaller than min. Fusing it saves next to no
// memory, and a fused call's fixed cost is then comparable to the whole
// attention (a 17-token ViT's 4.5 KiB sites ran 1.08x slower fused, either
// target: kernels/README.md). Approximations were asked for explicitly and
// are kept; sites of unknown size are fused.
func BelowMinScores(p *Plan, min int64) string {
	if min <= 0 || p.Approximate() || p.BytesBefore < 0 || p.BytesBefore >= min {
		return ""
	}
	return fmt.Sprintf("scores %s are below --min-scores %s: too small to gain from fusing", units.FormatBytes(p.BytesBefore), units.FormatBytes(min))
}

// Choose applies the policy to one site.
func Choose(s *match.Match, o ApproxOptions) *Plan {
	if p := o.SitePlans[s.ID]; p != nil {
		return p
	}
	before, ok := s.ScoreBytes()
	if !ok {
		before = -1
	}
	exact := &Plan{Kind: Exact, BytesBefore: before, BytesAfter: -1}
	if fb, ok := s.FootprintBytes(); ok {
		exact.BytesAfter = fb
	}
	explicit := o.Window != nil || o.Pool != ""
	if !explicit && (o.MemoryBudget == 0 || exact.BytesAfter < 0 || exact.BytesAfter <= o.MemoryBudget) {
		if o.MemoryBudget > 0 && exact.BytesAfter >= 0 {
			exact.Reason = fmt.Sprintf("the fused op fits the budget (%s ≤ %s)", units.FormatBytes(exact.BytesAfter), units.FormatBytes(o.MemoryBudget))
		}
		return exact
	}
	grid, why := siteGrid(s, o.Grid)
	if grid == nil {
		exact.Reason = "no approximation: " + why
		return exact
	}
	if explicit {
		p := explicitPlan(s, grid, o)
		p.BytesBefore = before
		if p.Kind != Exact {
			p.BytesAfter = planBytes(s, p)
		}
		return p
	}
	if !o.AllowApprox {
		exact.Reason = fmt.Sprintf("the fused op needs %s, over the %s budget; approximations need --allow-approx", units.FormatBytes(exact.BytesAfter), units.FormatBytes(o.MemoryBudget))
		return exact
	}
	// Least lossy first. A window keeps Q, K, V and O whole, so it never
	// fits where exact fusion does not; pooling K and V, then all of Q, K,
	// V with an upsample, at strides 2, 4, 8.
	for _, kind := range []Kind{PoolKV, PoolQKV} {
		for _, st := range []int64{2, 4, 8} {
			p := &Plan{Kind: kind, Stride: st, Upsample: "nearest", Grid: grid, BytesBefore: before}
			if err := approxApplies(s, p); err != "" {
				continue
			}
			p.BytesAfter = planBytes(s, p)
			if p.BytesAfter <= o.MemoryBudget {
				p.Reason = fmt.Sprintf("exact fusion needs %s, over the %s budget; the least lossy plan that fits (windows keep Q, K, V and O whole, so they never fit where exact fusion does not)", units.FormatBytes(exact.BytesAfter), units.FormatBytes(o.MemoryBudget))
				return p
			}
		}
	}
	exact.Reason = fmt.Sprintf("no approximation fits the %s budget; fused exactly (%s)", units.FormatBytes(o.MemoryBudget), units.FormatBytes(exact.BytesAfter))
	return exact
}

func explicitPlan(s *match.Match, grid *Grid, o ApproxOptions) *Plan {
	var p *Plan
	if o.Window != nil {
		p = &Plan{Kind: Window, Window: fitAxes(o.Window, grid.Dims), Shift: fitAxes(o.Shift, grid.Dims), Grid: grid}
		if o.Shift == nil {
			p.Shift = make([]int64, len(grid.Dims))
		}
	} else {
		p = &Plan{Kind: Kind("pool_" + o.Pool), Stride: max(o.Stride, 1), Upsample: o.Upsample, Grid: grid}
		if p.Upsample == "" {
			p.Upsample = "nearest"
		}
	}
	if why := approxApplies(s, p); why != "" {
		return &Plan{Kind: Exact, BytesAfter: -1, Reason: "no approximation: " + why}
	}
	return p
}

// fitAxes gives one value per grid axis: a single value repeats, and a
// window never exceeds its axis.
func fitAxes(v, grid []int64) []int64 {
	out := make([]int64, len(grid))
	for i := range out {
		switch {
		case len(v) == 1:
			out[i] = v[0]
		case i < len(v):
			out[i] = v[i]
		}
		if out[i] > grid[i] {
			out[i] = grid[i]
		}
	}
	return out
}

// siteGrid is the recovered grid, or the --grid override when its size
// matches the queries.
func siteGrid(s *match.Match, override []int64) (*Grid, string) {
	g := RecoverGrid(s)
	if override != nil {
		if n, ok := s.QLen.Value(); !ok || prod(override) != n {
			return nil, fmt.Sprintf("--grid %s has %d cells, the site has %s queries", units.FormatDims(override), prod(override), s.QLen)
		}
		if g == nil {
			g = &Grid{}
		}
		g.Dims, g.Proven, g.Reason = override, true, ""
		return g, ""
	}
	if g == nil {
		return nil, "no spatial grid found for the queries (give --grid)"
	}
	if !g.Proven {
		return nil, "grid " + g.String() + " not proven: " + g.Reason + " (give --grid to use it)"
	}
	return g, ""
}

// approxApplies says why a plan cannot serve a site ("" when it can). Keys
// must lie on the queries' grid: traced there, or asserted by --grid.
func approxApplies(s *match.Match, p *Plan) string {
	if !staticSite(s) {
		return "the site has symbolic sizes (pin them with --dim)"
	}
	if len(s.Masks) > 0 || s.Causal {
		return "the site is masked; approximations keep every key's position"
	}
	nq, _ := s.QLen.Value()
	nk, _ := s.KVLen.Value()
	cells := prod(p.Grid.Dims)
	if nq != cells || nk != cells || (p.Grid.Source != nil && p.Grid.KVSource == nil) {
		return fmt.Sprintf("keys (%d) are not on the queries' grid %s", nk, p.Grid.String())
	}
	switch p.Kind {
	case Window:
		for i, w := range p.Window {
			if w < 1 || p.Shift[i] < 0 || p.Shift[i] >= p.Grid.Dims[i] {
				return "window and shift must be positive and inside the grid"
			}
		}
	case PoolKV, PoolQKV:
		if p.Stride < 2 {
			return "--stride must be at least 2"
		}
		if p.Upsample != "nearest" && p.Upsample != "linear" {
			return "--upsample must be nearest or linear"
		}
	default:
		return "unknown approximation " + string(p.Kind)
	}
	return ""
}

// Kind is what the rewrite does with a site.
type Kind string

const (
	Exact   Kind = "exact"
	Window  Kind = "window"
	PoolKV  Kind = "pool_kv"
	PoolQKV Kind = "pool_qkv"
)
