// Package report turns analysis results into what users read: tables on a
// terminal and JSON for machines, behind one writer switch per report.
package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/version"
	"github.com/attnopt/attnopt/passes"
)

// Inspect is the `attnopt inspect` report (docs/design.md §7).
type Inspect struct {
	Schema   string           `json:"schema"`
	Version  string           `json:"version"`
	Model    string           `json:"model"`
	Opsets   map[string]int64 `json:"opsets"`
	Sites    []SiteInfo       `json:"sites"`
	Fused    []FusedInfo      `json:"fused"`
	Totals   Totals           `json:"totals"`
	Rejected []Rejection      `json:"rejected,omitempty"`
	// Nested is every attention op and Softmax inside subgraph attributes
	// (If/Loop bodies, BeamSearch decoders): the sites among them are also
	// in Sites (with Subgraph set), the others say why they stay.
	Nested []NestedInfo `json:"nested,omitempty"`
	// Provenance is set by the CLI.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// NestedInfo is one attention op or Softmax inside a subgraph.
type NestedInfo struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	Node string `json:"node"`
	// Site is the ID of the site it is part of (rewrite fuses it), or
	// absent with Reason saying why it is not one.
	Site   *int   `json:"site,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// SiteInfo is one attention site.
type SiteInfo struct {
	ID         int             `json:"id"`
	Subgraph   string          `json:"subgraph,omitempty"` // "If n/then_branch"; absent in the main graph
	Nodes      []string        `json:"nodes"`
	Softmax    string          `json:"softmax"`
	Variant    string          `json:"variant"`
	Q          string          `json:"q"`
	K          string          `json:"k"`
	V          string          `json:"v"`
	Output     string          `json:"output"`
	Batch      *int64          `json:"batch"`
	Heads      *int64          `json:"heads"`
	KVHeads    *int64          `json:"kv_heads"`
	QLen       *int64          `json:"q_len"`
	KVLen      *int64          `json:"kv_len"`
	HeadDim    *int64          `json:"head_dim"`
	VHeadDim   *int64          `json:"v_head_dim"`
	Dims       Dims            `json:"dims"`
	DType      string          `json:"dtype"`
	Mask       passes.MaskKind `json:"mask"`
	MaskShape  []any           `json:"mask_shape"`
	Causal     bool            `json:"causal"`
	Scale      float64         `json:"scale"`
	Softcap    float64         `json:"softcap,omitempty"` // c·tanh(s/c) before the mask; absent when none
	ScoreBytes *int64          `json:"score_bytes"`
	// FusedBytes is what the fused op adds beyond its inputs and output,
	// per CPU worker thread (passes/match Match.FusedBytes); IOBytes is Q,
	// K, V and O, which both graphs hold (docs/design.md §6).
	FusedBytes *int64  `json:"fused_bytes"`
	IOBytes    *int64  `json:"io_bytes"`
	Grid       []int64 `json:"grid"`        // token grid, null for sequences
	TokenOrder string  `json:"token_order"` // channels_last or channels_first
	GridProven bool    `json:"grid_proven"`
	// SlidingWindow is how many keys each query sees under a causal sliding
	// window (passes.Site's SlidingWindow); absent without one.
	SlidingWindow int64 `json:"sliding_window,omitempty"`
	// Rows is what a row that sees no key yields (passes.Site's Rows,
	// docs/fully-masked-rows.md); absent when every row sees a key.
	Rows *RowsInfo `json:"rows,omitempty"`
	// LiftedFrom is the fused op ("domain.Op") a site was lifted from; its
	// runtime materialises the scores (passes/match/fused.go). Empty for patterns.
	LiftedFrom string `json:"lifted_from,omitempty"`
	// CUDA is the site on ONNX Runtime's CUDA EP (cuda.go): inspect's
	// advice, or the kernel a rewrite's op runs there.
	CUDA *CUDAInfo `json:"cuda,omitempty"`
	// liftedForm is the lifted site's form (passes.LiftedForm), which its
	// Variant also names.
	liftedForm string
}

// RowsInfo is a site's row semantics as typed fields: empty is how a row
// that sees no key is computed (zero, literal, literal_zero), the fills are
// what the source adds to dropped keys (null: −inf), fill_once and
// fill_round how it combined and rounded them, guarded that zeros come from
// the source's own guard.
type RowsInfo struct {
	Empty      string   `json:"empty"`
	MaskFill   *float64 `json:"mask_fill"`
	CausalFill *float64 `json:"causal_fill"`
	FillOnce   bool     `json:"fill_once"`
	FillRound  bool     `json:"fill_round"`
	Guarded    bool     `json:"guarded"`
	// MaskFloor: a float mask value at or below it drops its key (half the
	// mask's finite fill); absent when only −inf does.
	MaskFloor *float64 `json:"mask_floor,omitempty"`
}

func newRowsInfo(r passes.Rows) *RowsInfo {
	if r == (passes.Rows{}) {
		return nil
	}
	fill := func(x float64) *float64 {
		if math.IsInf(x, -1) {
			return nil
		}
		return &x
	}
	ri := &RowsInfo{Empty: r.Empty.String(), MaskFill: fill(r.MaskFill), CausalFill: fill(r.CausalFill), FillOnce: r.Once, FillRound: r.Round, Guarded: r.Guarded}
	if r.MaskFloor < 0 {
		ri.MaskFloor = &r.MaskFloor
	}
	return ri
}

// Dims gives every dim as text, symbolic ones included ("batch", "2*seq").
type Dims struct {
	Batch, Heads, QLen, KVLen, HeadDim, VHeadDim string
}

// FusedInfo is an attention op that is already fused.
type FusedInfo struct {
	Op     string `json:"op"`
	Domain string `json:"domain"`
	Node   string `json:"node"`
	Output string `json:"output"`
	// Sizes and memory, filled by inspect for attnopt's own ops.
	Heads      *int64  `json:"heads,omitempty"`
	QLen       *int64  `json:"q_len,omitempty"`
	KVLen      *int64  `json:"kv_len,omitempty"`
	HeadDim    *int64  `json:"head_dim,omitempty"`
	VHeadDim   *int64  `json:"v_head_dim,omitempty"`
	Window     []int64 `json:"window,omitempty"`
	ScoreBytes *int64  `json:"score_bytes,omitempty"`
	FusedBytes *int64  `json:"fused_bytes,omitempty"`
}

// newFusedInfo describes an already-fused op named name, with its sizes
// and memory where passes.DescribeFused reads them (attnopt's own ops).
func newFusedInfo(n *graph.Node, name string) FusedInfo {
	fi := FusedInfo{Op: n.OpType, Domain: n.Domain, Node: name}
	if o := n.Output(0); o != nil {
		fi.Output = o.Name
	}
	if d := passes.DescribeFused(n); d != nil {
		fi.Heads, fi.QLen, fi.KVLen = dimPtr(d.Heads), dimPtr(d.QLen), dimPtr(d.KVLen)
		fi.HeadDim, fi.VHeadDim, fi.Window = dimPtr(d.HeadDim), dimPtr(d.VHeadDim), d.Window
		fi.ScoreBytes, fi.FusedBytes = bytesPtr(d.ScoreBytes, d.ScoreBytes >= 0), bytesPtr(d.FusedBytes, d.FusedBytes >= 0)
	}
	return fi
}

// Totals sums the sites' memory; null when any site's size is unknown.
type Totals struct {
	Sites      int    `json:"sites"`
	ScoreBytes *int64 `json:"score_bytes"`
	FusedBytes *int64 `json:"fused_bytes"`
	IOBytes    *int64 `json:"io_bytes"`
}

// Rejection is a Softmax that is not a site, or a fused op that could not
// be lifted into one (Op names it then), and why.
type Rejection struct {
	Softmax string `json:"softmax"`
	Op      string `json:"op,omitempty"`
	At      string `json:"at"`
	// Code is the reason's kind (passes/match/reject.go), for tools.
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func newRejection(r *passes.Reject) Rejection {
	x := Rejection{Softmax: r.Softmax.Label(), At: r.At, Code: r.Code.String(), Reason: r.Reason}
	if passes.IsFusedAttention(r.Softmax) {
		x.Op = passes.OpName(r.Softmax)
	}
	return x
}

// text is the --explain line.
func (x Rejection) text() string {
	what := "Softmax"
	if x.Op != "" {
		what = x.Op + " (kept fused)"
	}
	return fmt.Sprintf("not a site: %s %s: %s", what, x.Softmax, strings.TrimSpace(x.Reason))
}

func dimPtr(d graph.Dim) *int64 {
	if v, ok := d.Value(); ok {
		return &v
	}
	return nil
}

func bytesPtr(v int64, ok bool) *int64 {
	if !ok {
		return nil
	}
	return &v
}

// NewInspect builds the report of one model.
func NewInspect(path string, m *graph.Model, res *passes.Result) *Inspect {
	r := &Inspect{Schema: InspectSchemaV1, Version: version.Version, Model: path, Opsets: map[string]int64{}, Sites: []SiteInfo{}, Fused: []FusedInfo{}}
	for _, o := range m.Opsets {
		r.Opsets[graph.DomainName(o.Domain)] = o.Version
	}
	var score, fused, io int64
	known := true
	sites := append(append([]*passes.Site(nil), res.Sites...), passes.NestedSites(res.Nested)...)
	for _, s := range sites {
		si := NewSiteInfo(s)
		si.CUDA = cudaAdvice(s)
		r.Sites = append(r.Sites, si)
		if si.ScoreBytes == nil || si.FusedBytes == nil || si.IOBytes == nil {
			known = false
		} else {
			score += *si.ScoreBytes
			fused += *si.FusedBytes
			io += *si.IOBytes
		}
	}
	r.Totals.Sites = len(sites)
	if known {
		r.Totals.ScoreBytes, r.Totals.FusedBytes, r.Totals.IOBytes = &score, &fused, &io
	}
	for _, n := range res.Fused {
		r.Fused = append(r.Fused, newFusedInfo(n, n.Name))
	}
	for _, rej := range res.Rejected {
		r.Rejected = append(r.Rejected, newRejection(rej))
	}
	for _, n := range res.Nested {
		ni := NestedInfo{Path: n.Path, Op: n.Op, Node: n.Node, Reason: n.Reason}
		if n.Site != nil {
			id := n.Site.ID // a copy: the report holds no pointer into the site
			ni.Site = &id
		}
		r.Nested = append(r.Nested, ni)
	}
	return r
}

// NewSiteInfo describes one site.
func NewSiteInfo(s *passes.Site) SiteInfo {
	si := SiteInfo{
		ID: s.ID, Subgraph: s.Path, Softmax: s.Softmax.Label(), Variant: s.Variant,
		Q: s.Q.Name, K: s.K.Name, V: s.V.Name, Output: s.Output.Name,
		Batch: dimPtr(s.Batch), Heads: dimPtr(s.Heads), KVHeads: dimPtr(s.KVHeads),
		QLen: dimPtr(s.QLen), KVLen: dimPtr(s.KVLen),
		HeadDim: dimPtr(s.HeadDim), VHeadDim: dimPtr(s.VHeadDim),
		Dims:  Dims{s.Batch.String(), s.Heads.String(), s.QLen.String(), s.KVLen.String(), s.HeadDim.String(), s.VHeadDim.String()},
		DType: s.DType.String(), Mask: s.Mask(), Causal: s.Causal, Scale: s.Scale, Softcap: s.Softcap,
		SlidingWindow: s.SlidingWindow, Rows: newRowsInfo(s.Rows),
	}
	for _, n := range s.Nodes {
		si.Nodes = append(si.Nodes, n.Label())
	}
	if len(s.Masks) > 0 && s.Masks[0].Shape().Ranked {
		si.MaskShape = []any{}
		for _, d := range s.Masks[0].Shape().Shape {
			if v, ok := d.Value(); ok {
				si.MaskShape = append(si.MaskShape, v)
			} else {
				si.MaskShape = append(si.MaskShape, d.String())
			}
		}
	}
	if s.Lifted != nil {
		si.LiftedFrom, si.liftedForm = passes.OpName(s.Lifted), passes.LiftedForm(s)
	}
	si.ScoreBytes = bytesPtr(s.ScoreBytes())
	si.FusedBytes = bytesPtr(s.FusedBytes())
	si.IOBytes = bytesPtr(s.IOBytes())
	if g := passes.RecoverGrid(s); g != nil {
		si.Grid, si.TokenOrder, si.GridProven = g.Dims, g.Order, g.Proven
	}
	return si
}

// label names a site in text output: "site 2 (sm)", or "site 2 (sm in
// If n/then_branch)" inside a subgraph.
func (s SiteInfo) label() string {
	if s.Subgraph != "" {
		return fmt.Sprintf("site %d (%s in %s)", s.ID, s.Softmax, s.Subgraph)
	}
	return fmt.Sprintf("site %d (%s)", s.ID, s.Softmax)
}

// nestedSites counts the sites inside subgraphs.
func (r *Inspect) nestedSites() int {
	n := 0
	for _, s := range r.Sites {
		if s.Subgraph != "" {
			n++
		}
	}
	return n
}
