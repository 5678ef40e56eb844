package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/version"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// SchemaV1 names the JSON schema of Report (report/schema/report.v1.json).
const SchemaV1 = "attnopt.report/v1"

// Report compares two models, A (before) and B (after): their signatures,
// op counts, nodes, initializers and opsets, and what happened to each
// attention site of A. It is the one model behind `attnopt diff` and
// `rewrite --report`; Render writes it in every format.
type Report struct {
	Schema  string        `json:"schema"`
	Version string        `json:"version"` // attnopt's (internal/version)
	Kind    Kind          `json:"kind"`
	Changed bool          `json:"changed"`
	A       ModelSummary  `json:"a"`
	B       ModelSummary  `json:"b"`
	Inputs  []SigChange   `json:"inputs"`
	Outputs []SigChange   `json:"outputs"`
	Opsets  []OpsetChange `json:"opsets"`
	Ops     []OpCount     `json:"op_counts"`
	Nodes   NodeDiff      `json:"nodes"`
	Inits   InitDiff      `json:"initializers"`
	Sites   []SiteReport  `json:"sites"`
	// NewSites are unfused sites of B that A does not have.
	NewSites   []SiteReport    `json:"new_sites"`
	Totals     SiteTotals      `json:"totals"`
	Rewrite    *RewriteInfo    `json:"rewrite"`
	Validation *ValidationInfo `json:"validation"`
	Notes      []string        `json:"notes"`
	// RunsWith says what runs B (the custom-op library it needs, the ONNX
	// Runtime versions tested); empty when B needs nothing special.
	RunsWith   string `json:"runs_with,omitempty"`
	customOps  *customOps
	Provenance *Provenance `json:"provenance,omitempty"`
}

// ModelSummary is one side of the comparison.
type ModelSummary struct {
	Path         string           `json:"path"`
	IRVersion    int64            `json:"ir_version"`
	Opsets       map[string]int64 `json:"opsets"`
	Inputs       []Signature      `json:"inputs"`
	Outputs      []Signature      `json:"outputs"`
	Nodes        int              `json:"nodes"`
	Initializers int              `json:"initializers"`
	Sites        int              `json:"sites"`
	Fused        []FusedInfo      `json:"fused"`
}

// SigChange is one graph input or output on either side.
type SigChange struct {
	Name   string     `json:"name"`
	Status SigStatus  `json:"status"`
	A      *Signature `json:"a"`
	B      *Signature `json:"b"`
}

// OpsetChange is one imported domain; 0 means not imported.
type OpsetChange struct {
	Domain string `json:"domain"`
	A      int64  `json:"a"`
	B      int64  `json:"b"`
}

// OpCount is the number of nodes of one op type before and after.
type OpCount struct {
	Op     string `json:"op"`
	Domain string `json:"domain"`
	A      int    `json:"a"`
	B      int    `json:"b"`
}

// NodeDiff lists nodes by label and op. A node present on both sides whose
// inputs, outputs or attributes differ is "changed".
type NodeDiff struct {
	Removed   []NodeRef `json:"removed"`
	Added     []NodeRef `json:"added"`
	Changed   []NodeRef `json:"changed"`
	Unchanged int       `json:"unchanged"`
}

// InitDiff lists initializers added, removed and changed.
type InitDiff struct {
	Added     []InitInfo   `json:"added"`
	Removed   []InitInfo   `json:"removed"`
	Changed   []InitChange `json:"changed"`
	Unchanged int          `json:"unchanged"`
	// NotCompared names same-typed initializers whose bytes were not read
	// (external data beyond the comparison budget); they count as unchanged.
	NotCompared []string `json:"not_compared"`
}

// InitInfo is one initializer's name, element type and dims.
type InitInfo struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Dims  []int64 `json:"dims"`
}

// InitChange is an initializer on both sides that differs: Reason is
// "dtype", "dims" or "content".
type InitChange struct {
	Name   string   `json:"name"`
	Reason string   `json:"reason"`
	A      InitInfo `json:"a"`
	B      InitInfo `json:"b"`
}

// SiteReport is one attention site of A (or, in NewSites, of B) and what
// happened to it. BytesBefore is its score tensor; BytesAfter is the fused
// op's footprint when fused, the score tensor when it is still there, null
// when unknown.
type SiteReport struct {
	ID int `json:"id"`
	// Subgraph is where a site inside a subgraph attribute lives ("If
	// n/then_branch"); absent for the main graph's.
	Subgraph  string          `json:"subgraph,omitempty"`
	Softmax   string          `json:"softmax"`
	Variant   string          `json:"variant"`
	Nodes     []string        `json:"nodes"`
	Q         string          `json:"q"`
	K         string          `json:"k"`
	V         string          `json:"v"`
	Output    string          `json:"output"`
	DType     string          `json:"dtype"`
	Mask      passes.MaskKind `json:"mask"`
	MaskShape []any           `json:"mask_shape"`
	Causal    bool            `json:"causal"`
	// SlidingWindow, Softcap and Rows are the site's typed window, cap and
	// row semantics (SiteInfo's).
	SlidingWindow int64     `json:"sliding_window,omitempty"`
	Softcap       float64   `json:"softcap,omitempty"` // c·tanh(s/c) before the mask; absent when none
	Rows          *RowsInfo `json:"rows,omitempty"`
	Scale         *float64  `json:"scale"` // null if not finite
	Shape         SiteShape `json:"shape"`
	ScoreBytes    *int64    `json:"score_bytes"`
	FusedBytes    *int64    `json:"fused_bytes"` // what the fused op adds (SiteInfo's)
	IOBytes       *int64    `json:"io_bytes"`    // Q, K, V, O: in both graphs

	Status        SiteStatus `json:"status"`
	BSoftmax      string     `json:"b_softmax"`
	Op            string     `json:"op"`
	FusedNode     string     `json:"fused_node"`
	Approximation *string    `json:"approximation"`
	Reason        string     `json:"reason"`
	// ReasonCode is the kind of a declined site's reason
	// (passes/match/reject.go); absent otherwise.
	ReasonCode  string          `json:"reason_code,omitempty"`
	BytesBefore *int64          `json:"bytes_before"`
	BytesAfter  *int64          `json:"bytes_after"`
	Validation  *SiteValidation `json:"validation"`
}

// SiteShape gives each dim as an integer, or as its symbolic expression
// ("batch", "2*seq") while it is not pinned.
type SiteShape struct {
	Batch    any `json:"batch"`
	Heads    any `json:"heads"`
	KVHeads  any `json:"kv_heads"`
	QLen     any `json:"q_len"`
	KVLen    any `json:"kv_len"`
	HeadDim  any `json:"head_dim"`
	VHeadDim any `json:"v_head_dim"`
}

func dimAny(d graph.Dim) any {
	if v, ok := d.Value(); ok {
		return v
	}
	return d.String()
}

func newSiteReport(s *passes.Site) SiteReport {
	si := NewSiteInfo(s)
	return SiteReport{ID: si.ID, Subgraph: si.Subgraph, Softmax: si.Softmax, Variant: si.Variant, Nodes: nonNil(si.Nodes),
		Q: si.Q, K: si.K, V: si.V, Output: si.Output, DType: si.DType, Mask: si.Mask, MaskShape: si.MaskShape,
		Causal: si.Causal, SlidingWindow: si.SlidingWindow, Softcap: si.Softcap, Rows: si.Rows, Scale: finite(si.Scale), ScoreBytes: si.ScoreBytes, FusedBytes: si.FusedBytes, IOBytes: si.IOBytes,
		Shape: SiteShape{dimAny(s.Batch), dimAny(s.Heads), dimAny(s.KVHeads), dimAny(s.QLen), dimAny(s.KVLen), dimAny(s.HeadDim), dimAny(s.VHeadDim)}}
}

// SiteTotals sums the sites' memory; a sum is null when any term is unknown.
type SiteTotals struct {
	Sites       int    `json:"sites"`
	Fused       int    `json:"fused"`        // approximated sites included
	Approximate int    `json:"approximated"` // of which approximated
	BytesBefore *int64 `json:"bytes_before"`
	BytesAfter  *int64 `json:"bytes_after"`
}

// RewriteInfo is the rewrite that made B from A.
type RewriteInfo struct {
	Target      string `json:"target"`
	Op          string `json:"op"`
	LayoutFolds int    `json:"layout_folds"`
	DeadRemoved int    `json:"nodes_removed"`
}

// ValidationInfo is a validation of B against A.
type ValidationInfo struct {
	Runtime string           `json:"runtime"`
	Scope   string           `json:"scope"`
	Seed    int64            `json:"seed"`
	Pass    bool             `json:"pass"`
	Verdict string           `json:"verdict"` // validate.Verdict's ReportString: PASS, FAIL, NO CHECKS, CANNOT CHECK, APPROXIMATE (not a pass)
	Checks  []SiteValidation `json:"checks"`
}

// SiteValidation is one check (a site, or the whole model).
type SiteValidation struct {
	Name    string       `json:"name"`
	Site    *int         `json:"site"`
	Pass    bool         `json:"pass"`
	Verdict CheckVerdict `json:"verdict"`
	// Approximate marks a windowed or pooled site: its metrics measure the
	// approximation's error, judged by --max-error, not the tolerances.
	Approximate bool            `json:"approximate"`
	Reduced     string          `json:"reduced"`
	Error       string          `json:"error"`
	Outputs     []OutputMetrics `json:"outputs"`
	// covers are the sites in subgraphs a check of a subgraph compares
	// (validate.Check.Covers).
	covers []int
}

// OutputMetrics are validate.Metrics with non-finite numbers as null.
type OutputMetrics struct {
	Output     string   `json:"output"`
	MaxAbs     *float64 `json:"max_abs"`
	MaxRel     *float64 `json:"max_rel"`
	MeanAbs    *float64 `json:"mean_abs"`
	Cosine     *float64 `json:"cosine"` // null where undefined: a side all zeros
	WorstIndex []int    `json:"worst_index"`
	NaNs       int      `json:"nan_or_inf"`
	Atol       float64  `json:"atol"`
	Rtol       float64  `json:"rtol"`
	Pass       bool     `json:"pass"`
}

// Inputs of a comparison. Actions and Match come from a rewrite that made B
// from A (passes.Context); without them the sites of A are found with
// passes.FindSites and mapped to B's fused nodes by name.
type Inputs struct {
	A, B       *Snapshot
	AModel     *graph.Model // for FindSites when Match is nil (may be nil then: no sites)
	BModel     *graph.Model // for B's remaining sites (may be nil)
	Match      *passes.Result
	Actions    []passes.Action
	Rewrite    *RewriteInfo
	Validation *validate.Report
	// CompareBudget caps the bytes of external initializer data read to
	// compare contents (default 256 MiB).
	CompareBudget int64
}

// Compare builds the report of A → B.
func Compare(in Inputs) *Report {
	r := &Report{Schema: SchemaV1, Version: version.Version, Kind: KindDiff, Rewrite: in.Rewrite, Notes: []string{}}
	if in.Rewrite != nil {
		r.Kind = KindRewrite
	}
	a, b := in.A, in.B
	r.Inputs = diffSigs(a.Inputs, b.Inputs)
	r.Outputs = diffSigs(a.Outputs, b.Outputs)
	r.Opsets = diffOpsets(a.Opsets, b.Opsets)
	r.Ops = diffOps(a, b)
	r.Nodes = diffNodes(a.Nodes, b.Nodes)
	budget := in.CompareBudget
	if budget == 0 {
		budget = 256 << 20
	}
	r.Inits = diffInits(a.Inits, b.Inits, budget)
	if len(r.Inits.NotCompared) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d large external initializer(s) of equal type and dims were not read; counted as unchanged", len(r.Inits.NotCompared)))
	}

	match := in.Match
	if match == nil && in.AModel != nil {
		match = passes.FindSites(in.AModel.Graph)
	}
	var bMatch *passes.Result
	if in.BModel != nil {
		bMatch = passes.FindSites(in.BModel.Graph)
	}
	r.Sites, r.NewSites = siteReports(match, in.Actions, bMatch, a, b)
	r.Sites = append(r.Sites, nestedSiteReports(match, in.Actions, bMatch)...)
	if in.Validation != nil {
		r.Validation = validationInfo(in.Validation)
		for i := range r.Sites {
			for j := range r.Validation.Checks {
				c := &r.Validation.Checks[j]
				if (c.Site != nil && *c.Site == r.Sites[i].ID) || coversNested(c, &r.Sites[i]) {
					r.Sites[i].Validation = c
				}
			}
		}
	}
	r.Totals = siteTotals(r.Sites, r.NewSites)
	r.A = summary(a, len(r.Sites))
	nb := len(r.NewSites)
	for _, s := range r.Sites {
		if s.Status == SiteUnchanged || s.Status == SiteLeft {
			nb++
		}
	}
	r.B = summary(b, nb)

	r.Changed = len(r.Nodes.Added)+len(r.Nodes.Removed)+len(r.Nodes.Changed) > 0 ||
		len(r.Inits.Added)+len(r.Inits.Removed)+len(r.Inits.Changed) > 0 ||
		a.IRVersion != b.IRVersion
	for _, c := range append(append([]SigChange{}, r.Inputs...), r.Outputs...) {
		r.Changed = r.Changed || c.Status != SigSame
	}
	for _, o := range r.Opsets {
		r.Changed = r.Changed || o.A != o.B
	}
	for _, s := range r.Sites {
		r.Changed = r.Changed || (s.Status != SiteUnchanged && s.Status != SiteLeft)
	}
	r.Changed = r.Changed || len(r.NewSites) > 0
	if a.IRVersion != b.IRVersion {
		r.Notes = append(r.Notes, fmt.Sprintf("IR version %d → %d", a.IRVersion, b.IRVersion))
	}
	r.RunsWith = runsWith(r)
	return r
}

func summary(s *Snapshot, sites int) ModelSummary {
	return ModelSummary{Path: s.Path, IRVersion: s.IRVersion, Opsets: s.Opsets, Inputs: nonNil(s.Inputs), Outputs: nonNil(s.Outputs),
		Nodes: len(s.Nodes), Initializers: len(s.Inits), Sites: sites, Fused: nonNil(s.Fused)}
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func diffSigs(a, b []Signature) []SigChange {
	out := []SigChange{}
	bi := map[string]int{}
	for i, s := range b {
		bi[s.Name] = i
	}
	seen := map[string]bool{}
	for i := range a {
		c := SigChange{Name: a[i].Name, A: &a[i], Status: SigRemoved}
		if j, ok := bi[a[i].Name]; ok {
			c.B = &b[j]
			c.Status = SigSame
			if a[i].String() != b[j].String() {
				c.Status = SigChanged
			}
		}
		seen[a[i].Name] = true
		out = append(out, c)
	}
	for j := range b {
		if !seen[b[j].Name] {
			out = append(out, SigChange{Name: b[j].Name, B: &b[j], Status: SigAdded})
		}
	}
	return out
}

func diffOpsets(a, b map[string]int64) []OpsetChange {
	all := map[string]bool{}
	for k := range a {
		all[k] = true
	}
	for k := range b {
		all[k] = true
	}
	out := []OpsetChange{}
	for _, d := range sortedKeys(all) {
		out = append(out, OpsetChange{Domain: d, A: a[d], B: b[d]})
	}
	return out
}

func diffOps(a, b *Snapshot) []OpCount {
	type key struct{ dom, op string }
	count := map[key]*OpCount{}
	var keys []key
	add := func(nodes []NodeRef, side int) {
		for _, n := range nodes {
			k := key{n.Domain, n.Op}
			c := count[k]
			if c == nil {
				c = &OpCount{Op: n.Op, Domain: domainName(n.Domain)}
				count[k] = c
				keys = append(keys, k)
			}
			if side == 0 {
				c.A++
			} else {
				c.B++
			}
		}
	}
	add(a.Nodes, 0)
	add(b.Nodes, 1)
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dom != keys[j].dom {
			return keys[i].dom < keys[j].dom
		}
		return keys[i].op < keys[j].op
	})
	out := []OpCount{}
	for _, k := range keys {
		out = append(out, *count[k])
	}
	return out
}

// diffNodes matches nodes by (label, domain, op), as multisets in graph
// order, so unnamed or duplicate names still pair up one to one.
func diffNodes(a, b []NodeRef) NodeDiff {
	d := NodeDiff{Removed: []NodeRef{}, Added: []NodeRef{}, Changed: []NodeRef{}}
	type key struct{ name, dom, op string }
	pending := map[key][]NodeRef{}
	matched := map[key]int{}
	for _, n := range b {
		k := key{n.Name, n.Domain, n.Op}
		pending[k] = append(pending[k], n)
	}
	for _, n := range a {
		k := key{n.Name, n.Domain, n.Op}
		q := pending[k]
		if len(q) == 0 {
			d.Removed = append(d.Removed, n)
			continue
		}
		pending[k] = q[1:]
		matched[k]++
		if q[0].sig != n.sig {
			d.Changed = append(d.Changed, n)
		} else {
			d.Unchanged++
		}
	}
	for _, n := range b {
		k := key{n.Name, n.Domain, n.Op}
		if matched[k] > 0 {
			matched[k]--
			continue
		}
		d.Added = append(d.Added, n)
	}
	return d
}

func initInfo(r initRef) InitInfo {
	return InitInfo{Name: r.name, DType: r.dtype, Dims: nonNil(r.dims)}
}

func diffInits(a, b []initRef, budget int64) InitDiff {
	d := InitDiff{Added: []InitInfo{}, Removed: []InitInfo{}, Changed: []InitChange{}, NotCompared: []string{}}
	bi := map[string]int{}
	for i, r := range b {
		bi[r.name] = i
	}
	seen := map[string]bool{}
	for _, ra := range a {
		seen[ra.name] = true
		j, ok := bi[ra.name]
		if !ok {
			d.Removed = append(d.Removed, initInfo(ra))
			continue
		}
		rb := b[j]
		reason := ""
		switch {
		case ra.dtype != rb.dtype:
			reason = "dtype"
		case fmt.Sprint(ra.dims) != fmt.Sprint(rb.dims):
			reason = "dims"
		default:
			same, compared := sameContent(ra.tensor, rb.tensor, &budget)
			if !compared {
				d.NotCompared = append(d.NotCompared, ra.name)
			} else if !same {
				reason = "content"
			}
		}
		if reason == "" {
			d.Unchanged++
		} else {
			d.Changed = append(d.Changed, InitChange{Name: ra.name, Reason: reason, A: initInfo(ra), B: initInfo(rb)})
		}
	}
	for _, rb := range b {
		if !seen[rb.name] {
			d.Added = append(d.Added, initInfo(rb))
		}
	}
	return d
}

// sameContent compares two tensors of equal type and dims: the same tensor
// object is equal without reading; in-memory data is compared in place
// (Raw returns the loaded raw_data without copying); external data is read
// only while the budget lasts.
func sameContent(x, y *graph.Tensor, budget *int64) (same, compared bool) {
	if x == y {
		return true, true
	}
	if x == nil || y == nil {
		return false, true
	}
	if x.IsExternal() || y.IsExternal() {
		need := int64(0)
		if x.IsExternal() {
			need += x.ByteSize()
		}
		if y.IsExternal() {
			need += y.ByteSize()
		}
		if need > *budget {
			return false, false
		}
		*budget -= need
	}
	rx, err1 := x.Raw()
	ry, err2 := y.Raw()
	if err1 != nil || err2 != nil {
		return false, true
	}
	return bytes.Equal(rx, ry), true
}

func siteReports(match *passes.Result, actions []passes.Action, bMatch *passes.Result, a, b *Snapshot) (sites, added []SiteReport) {
	sites, added = []SiteReport{}, []SiteReport{}
	bNodes := map[string]bool{}
	for _, n := range b.Nodes {
		bNodes[n.Name] = true
	}
	bSites := map[string]*passes.Site{}
	if bMatch != nil {
		for _, s := range bMatch.Sites {
			bSites[s.Softmax.Label()] = s
		}
	}
	byID := map[int]*passes.Action{}
	for i := range actions {
		byID[actions[i].Site.ID] = &actions[i]
	}
	if match != nil {
		for _, s := range match.Sites {
			sr := newSiteReport(s)
			sr.BytesBefore = sr.ScoreBytes
			act := byID[s.ID]
			fusedNode, fusedOp := "", ""
			if act != nil && act.Fused {
				fusedNode, fusedOp = act.Node, act.Op
			} else if act == nil {
				fusedNode, fusedOp = fusedBySite(b, s.ID)
			}
			switch {
			case fusedNode != "" || (act != nil && act.Fused):
				sr.Status, sr.Op, sr.FusedNode = SiteFused, fusedOp, fusedNode
				sr.BytesAfter = sr.FusedBytes
				if act != nil && act.Plan != nil {
					if act.Plan.Approximate() {
						name := act.Plan.String()
						sr.Status, sr.Approximation = SiteApprox, &name
					}
					// After is what the fused op adds (fused_bytes), like the
					// scores before it; a pooled plan also adds its pooled
					// tensors, so it keeps the plan's footprint, which the
					// budget judged (docs/design.md §6).
					if act.Plan.Pooled() && act.Plan.BytesAfter >= 0 {
						after := act.Plan.BytesAfter
						sr.BytesAfter = &after
					}
				} else if kind := approximationBySite(b, s.ID); kind != passes.PlanExact {
					// A diff knows the plan's kind, not its parameters.
					name := "window"
					if kind != passes.PlanWindow {
						// The pooled op holds less than the exact one; its
						// footprint is not derived here.
						name, sr.BytesAfter = "pool", nil
					}
					sr.Status, sr.Approximation = SiteApprox, &name
				}
				if bs := bSites[fusedNode]; fusedNode != "" && bs != nil {
					// The fused op is a site of B itself: its runtime
					// materialises the scores (passes/match/fused.go).
					sr.BytesAfter = bytesPtr(bs.ScoreBytes())
					sr.Reason = "the fused op still materialises the scores: " + passes.LiftedNote(passes.OpName(bs.Lifted))
					delete(bSites, fusedNode)
				}
			case act != nil:
				sr.Status, sr.Reason, sr.BytesAfter = SiteLeft, act.Reason, sr.ScoreBytes
				if act.Reject != nil {
					sr.ReasonCode = act.Reject.Code.String()
				}
			case bSites[sr.Softmax] != nil:
				sr.Status, sr.BytesAfter = SiteUnchanged, sr.ScoreBytes
				delete(bSites, sr.Softmax)
			case bNodes[sr.Softmax]:
				sr.Status, sr.BytesAfter = SiteUnchanged, sr.ScoreBytes
				sr.Reason = "the softmax is still in B but no longer matches as a site"
			default:
				sr.Status = SiteRemoved
				sr.Reason = "the softmax is gone from B and no fused node is named for this site"
			}
			delete(bSites, sr.Softmax)
			if sr.Status == SiteUnchanged || sr.Status == SiteLeft {
				sr.BSoftmax = sr.Softmax
			}
			sites = append(sites, sr)
		}
	}
	if act := len(actions); act == 0 {
		pairRenamed(sites, bMatch, bSites)
		pairForeignFused(sites, a, b)
	}
	if bMatch != nil {
		for _, s := range bMatch.Sites {
			if bSites[s.Softmax.Label()] == nil {
				continue
			}
			sr := newSiteReport(s)
			sr.Status = SiteNew
			sr.BytesAfter = sr.ScoreBytes
			added = append(added, sr)
		}
	}
	return sites, added
}

// siteKey is what two exports of one attention block share whatever their
// node names: pattern variant, dtype, mask, shape and scale.
func siteKey(s *SiteReport) string {
	return fmt.Sprintf("%s|%s|%s|%v|%v|%v|%v|%v|%v|%v|%s", s.Variant, s.DType, s.maskText(), s.Shape.Batch, s.Shape.Heads,
		s.Shape.KVHeads, s.Shape.QLen, s.Shape.KVLen, s.Shape.HeadDim, s.Shape.VHeadDim, num(s.Scale, "%.6g"))
}

// pairRenamed pairs sites of A whose Softmax is gone from B with B's
// still-unclaimed unfused sites of the same structure, in graph order (two
// exports of one model name their nodes differently).
func pairRenamed(sites []SiteReport, bMatch *passes.Result, bSites map[string]*passes.Site) {
	if bMatch == nil {
		return
	}
	var free []SiteReport
	for _, s := range bMatch.Sites {
		if bSites[s.Softmax.Label()] != nil {
			free = append(free, newSiteReport(s))
		}
	}
	for i := range sites {
		sr := &sites[i]
		if sr.Status != SiteRemoved {
			continue
		}
		for j := range free {
			if free[j].Softmax == "" || siteKey(&free[j]) != siteKey(sr) {
				continue
			}
			sr.Status, sr.BytesAfter, sr.BSoftmax = SiteUnchanged, sr.ScoreBytes, free[j].Softmax
			sr.Reason = "renamed: still unfused in B as " + free[j].Softmax + " (paired by variant, dtype, mask and shape)"
			delete(bSites, free[j].Softmax)
			free[j].Softmax = ""
			break
		}
	}
}

// pairForeignFused attributes fused ops of B that A lacks and that no site
// claims by name (another tool's fusion, e.g. ONNX Runtime's optimizer) to
// A's removed sites, in graph order, when their numbers agree; otherwise
// the sites stay removed.
func pairForeignFused(sites []SiteReport, a, b *Snapshot) {
	var removed []int
	for i, s := range sites {
		if s.Status == SiteRemoved {
			removed = append(removed, i)
		}
	}
	if len(removed) == 0 {
		return
	}
	inA := map[string]bool{}
	for _, f := range a.Fused {
		inA[f.Node] = true
	}
	claimed := map[string]bool{}
	for _, s := range sites {
		claimed[s.FusedNode] = true
	}
	var free []FusedInfo
	for _, f := range b.Fused {
		if !inA[f.Node] && !claimed[f.Node] {
			free = append(free, f)
		}
	}
	if len(free) != len(removed) {
		return
	}
	for k, i := range removed {
		sr, f := &sites[i], free[k]
		sr.Status, sr.FusedNode, sr.Op = SiteFused, f.Node, domainName(f.Domain)+"."+f.Op
		sr.BytesAfter = sr.FusedBytes
		sr.Reason = "fused op paired by graph order (B names no node for this site); after is the fused footprint estimate"
	}
}

// fusedBySite finds the fused node this project's rewrite made for site id:
// the node that recorded the id (passes.SiteOf).
func fusedBySite(b *Snapshot, id int) (node, op string) {
	for _, n := range b.Nodes {
		if n.site == id && passes.IsFusedAttention(&graph.Node{OpType: n.Op, Domain: n.Domain}) {
			return n.Name, domainName(n.Domain) + "." + n.Op
		}
	}
	return "", ""
}

// approximationBySite is the approximation the rewrite of site id recorded
// on its nodes (docs/design.md §5): window, pool_kv or pool_qkv, or
// PlanExact for an exact fusion.
func approximationBySite(b *Snapshot, id int) passes.PlanKind {
	for _, n := range b.Nodes {
		if n.site != id {
			continue
		}
		switch n.plan {
		case passes.PlanWindow, passes.PlanPoolKV, passes.PlanPoolQKV:
			return n.plan
		}
	}
	return passes.PlanExact
}

func siteTotals(sites, added []SiteReport) SiteTotals {
	t := SiteTotals{Sites: len(sites)}
	var before, after int64
	kb, ka := true, true
	for _, s := range sites {
		if s.Status == SiteFused || s.Status == SiteApprox {
			t.Fused++
		}
		if s.Status == SiteApprox {
			t.Approximate++
		}
		if s.BytesBefore == nil {
			kb = false
		} else {
			before += *s.BytesBefore
		}
		if s.BytesAfter == nil {
			ka = false
		} else {
			after += *s.BytesAfter
		}
	}
	for _, s := range added {
		if s.BytesAfter == nil {
			ka = false
		} else {
			after += *s.BytesAfter
		}
	}
	if kb {
		t.BytesBefore = &before
	}
	if ka {
		t.BytesAfter = &after
	}
	return t
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func validationInfo(v *validate.Report) *ValidationInfo {
	vi := &ValidationInfo{Runtime: v.Runtime, Scope: v.Scope, Seed: v.Seed, Pass: v.Pass, Verdict: v.Verdict.ReportString(), Checks: []SiteValidation{}}
	for _, c := range v.Checks {
		sv := SiteValidation{Name: c.Name, Site: c.SiteID, Pass: c.Pass, Reduced: c.Reduced, Error: c.Error, Approximate: c.Approximate, Outputs: []OutputMetrics{},
			covers: c.Covers}
		switch {
		case c.Verdict == validate.CannotCheck:
			sv.Verdict = VerdictCannotCheck
		case c.Error != "":
			sv.Verdict = VerdictError
		case c.Verdict == validate.Approximate:
			sv.Verdict = VerdictApproximate
		case c.Pass && c.Approximate:
			sv.Verdict = VerdictWithinBound
		case c.Pass:
			sv.Verdict = VerdictOK
		default:
			sv.Verdict = VerdictFail
		}
		for _, m := range c.Outputs {
			sv.Outputs = append(sv.Outputs, OutputMetrics{Output: m.Output, MaxAbs: finite(m.MaxAbs), MaxRel: finite(m.MaxRel),
				MeanAbs: finite(m.MeanAbs), Cosine: m.Cosine, WorstIndex: nonNil(m.WorstIndex), NaNs: m.NaNs,
				Atol: m.Atol, Rtol: m.Rtol, Pass: m.Pass})
		}
		vi.Checks = append(vi.Checks, sv)
	}
	return vi
}

// DiffModels compares two loaded models; aPath and bPath are the names the
// report shows.
func DiffModels(aPath string, a *graph.Model, bPath string, b *graph.Model) *Report {
	return Compare(Inputs{A: TakeSnapshot(aPath, a), B: TakeSnapshot(bPath, b), AModel: a, BModel: b})
}

// RewriteReport describes a rewrite: before is the snapshot of the input
// taken before passes.Rewrite changed it, after the rewritten model saved
// as outPath, c the rewrite's context and v the validation (nil when none
// ran).
func RewriteReport(before *Snapshot, outPath string, after *graph.Model, c *passes.Context, v *validate.Report) *Report {
	in := Inputs{A: before, B: TakeSnapshot(outPath, after), Match: c.Match, Actions: c.Actions, Validation: v,
		Rewrite: &RewriteInfo{Target: c.Target.Name(), Op: c.Target.Op(), LayoutFolds: c.LayoutFolds, DeadRemoved: c.DeadRemoved}}
	if in.Match == nil {
		in.Match = &passes.Result{}
	}
	return Compare(in)
}
