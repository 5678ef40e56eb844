package plan

import (
	"strconv"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/units"
)

// Metadata keys recorded on every fused node (graph.Node.SetMeta): the
// site it replaced and the plan, so validate and report ask the node.
const (
	MetaSite = "attnopt.site"
	MetaPlan = "attnopt.plan"
)

// SiteOf returns the site id a rewrite recorded on a fused node.
func SiteOf(n *graph.Node) (int, bool) {
	v := n.Meta(MetaSite)
	if v == "" {
		return 0, false
	}
	id, err := strconv.Atoi(v)
	return id, err == nil && id >= 0
}

// Metadata keys of an approximate plan, next to MetaSite and MetaPlan.
const (
	metaGrid     = "attnopt.grid"
	metaWindow   = "attnopt.window"
	metaShift    = "attnopt.shift"
	metaStride   = "attnopt.stride"
	metaUpsample = "attnopt.upsample"
	// MetaMaxError is the bound an approximate plan met when rewrite ran
	// with --max-error; validate accepts the site's error under it.
	MetaMaxError = "attnopt.max_error"
)

// Record writes the site id and plan on a fused node.
func Record(n *graph.Node, site int, p *Plan) {
	n.SetMeta(MetaSite, strconv.Itoa(site))
	n.SetMeta(MetaPlan, string(p.Kind))
	if !p.Approximate() {
		return
	}
	n.SetMeta(metaGrid, units.FormatDims(p.Grid.Dims))
	if p.MaxError > 0 {
		n.SetMeta(MetaMaxError, strconv.FormatFloat(p.MaxError, 'g', -1, 64))
	}
	switch p.Kind {
	case Window:
		n.SetMeta(metaWindow, units.FormatDims(p.Window))
		n.SetMeta(metaShift, units.FormatDims(p.Shift))
	case PoolKV, PoolQKV:
		n.SetMeta(metaStride, strconv.FormatInt(p.Stride, 10))
		if p.Kind == PoolQKV {
			n.SetMeta(metaUpsample, p.Upsample)
		}
	}
}

// RecordedPlan reads what recordPlan wrote: the plan kind and, for an
// approximation, its settings and grid. ok is false for a node without a
// recorded site.
func RecordedPlan(n *graph.Node) (kind Kind, approx *ApproxOptions, grid []int64, ok bool) {
	if _, ok := SiteOf(n); !ok {
		return "", nil, nil, false
	}
	kind = Kind(n.Meta(MetaPlan))
	grid = dimsOf(n.Meta(metaGrid))
	switch kind {
	case Window:
		approx = &ApproxOptions{Window: dimsOf(n.Meta(metaWindow)), Shift: dimsOf(n.Meta(metaShift))}
	case PoolKV, PoolQKV:
		st, _ := strconv.ParseInt(n.Meta(metaStride), 10, 64)
		approx = &ApproxOptions{Pool: "kv", Stride: st}
		if kind == PoolQKV {
			approx.Pool, approx.Upsample = "qkv", n.Meta(metaUpsample)
		}
	}
	return kind, approx, grid, true
}

// dimsOf reads what units.FormatDims wrote (nil for "" or a bad value).
func dimsOf(s string) []int64 {
	if s == "" {
		return nil
	}
	ds, err := units.ParseDims(s)
	if err != nil {
		return nil
	}
	return ds
}
