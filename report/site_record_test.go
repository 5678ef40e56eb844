package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/passes/match"
)

// jsonFields maps a struct's JSON names to its Go field names.
func jsonFields(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			out[name] = f.Name
		}
	}
	return out
}

// TestSiteRecordsAgree holds the site records of inspect (SiteInfo) and
// rewrite/diff reports (SiteReport) equal: every field inspect shows is in
// the report under the same JSON name, or named here with where the report
// carries it instead (issue 39: softcap was added to SiteInfo only).
func TestSiteRecordsAgree(t *testing.T) {
	elsewhere := map[string]string{
		"batch": "shape.batch", "heads": "shape.heads", "kv_heads": "shape.kv_heads", "q_len": "shape.q_len",
		"kv_len": "shape.kv_len", "head_dim": "shape.head_dim", "v_head_dim": "shape.v_head_dim",
		"dims":        "shape (the same dims, integers or expressions)",
		"grid":        "inspect only: the token grid an approximation plans over; the report names the plan in approximation",
		"token_order": "inspect only, with grid",
		"grid_proven": "inspect only, with grid",
		"lifted_from": "the report's op and reason name the lifted op",
		"cuda":        "inspect only: advice for --target; a report's op is already chosen",
	}
	info, rep := jsonFields(reflect.TypeOf(SiteInfo{})), jsonFields(reflect.TypeOf(SiteReport{}))
	for name := range info {
		if _, ok := rep[name]; !ok && elsewhere[name] == "" {
			t.Errorf("inspect's site field %q has no field in SiteReport (report/compare.go) and no entry here", name)
		}
	}
	for name := range elsewhere {
		if _, ok := info[name]; !ok {
			t.Errorf("entry %q names no SiteInfo field", name)
		}
	}
}

// TestCheckSiteIsAReportSite: check's site record (CheckSite) takes each of
// its fields from the rewrite report's (SiteReport) under the same JSON name
// and Go type, its verdict (status, check's own kind) aside, so the three
// records stay one record in three cuts.
func TestCheckSiteIsAReportSite(t *testing.T) {
	rt := reflect.TypeOf(SiteReport{})
	ct := reflect.TypeOf(CheckSite{})
	rep := jsonFields(rt)
	for name, field := range jsonFields(ct) {
		if name == "status" {
			continue
		}
		rf, ok := rep[name]
		if !ok {
			t.Errorf("check's site field %q is not a SiteReport field (report/compare.go)", name)
			continue
		}
		a, _ := ct.FieldByName(field)
		b, _ := rt.FieldByName(rf)
		if a.Type != b.Type {
			t.Errorf("check's %q is %s, the report's %s", name, a.Type, b.Type)
		}
	}
}

// TestMatchFieldsAreRecorded walks match.Match's exported fields: each is
// shown by SiteInfo (the record every report builds on) or marked internal
// with the reason, so a new Match field without a record fails here.
func TestMatchFieldsAreRecorded(t *testing.T) {
	recorded := map[string]string{ // Match field -> SiteInfo JSON field
		"ID": "id", "Path": "subgraph", "Nodes": "nodes", "Q": "q", "K": "k", "V": "v", "Output": "output",
		"Scale": "scale", "Softcap": "softcap", "Masks": "mask", "Causal": "causal", "SlidingWindow": "sliding_window",
		"Rows": "rows", "Fills": "rows", "Softmax": "softmax", "Variant": "variant", "Lifted": "lifted_from",
		"Batch": "batch", "Heads": "heads", "KVHeads": "kv_heads", "QLen": "q_len", "KVLen": "kv_len",
		"HeadDim": "head_dim", "VHeadDim": "v_head_dim", "DType": "dtype",
	}
	internal := map[string]string{
		"KTransposed":    "a layout the lowering undoes; variant names it",
		"VChannelsFirst": "a layout (SAGAN); variant names it",
		"Repeated":       "GQA's repeated K/V; heads and kv_heads show the grouping",
		"ScaleForm":      "how the scale was written; scale is its value",
		"QScales":        "per-head scales applied to Q; variant names them",
		"ZeroRowGuard":   "a guard the fused op subsumes; rows shows the semantics",
		"ScoreOp":        "MatMul or Einsum; variant names it",
		"SoftCasts":      "fp32 casts around the softmax; dtype and variant show them",
		"Rank":           "the site's rank; dims show it",
		"PackedHeads":    "a layout stage 1 adapts; variant names it",
		"Perm":           "Einsum operand layouts stage 1 transposes; variant names them (permuted)",
		"KVBroadcast":    "K/V shared over Q's leading axes, expanded by stage 1; variant names it (kv-shared)",
		"PastK":          "a KV cache; kv_len includes it and variant names it",
		"PastV":          "with PastK",
		"WantPresent":    "a cache output the rewrite keeps",
		"StackedPresent": "with WantPresent",
		"Packed":         "com.microsoft.Attention's projection; lifted_from names the op",
	}
	info := jsonFields(reflect.TypeOf(SiteInfo{}))
	m := reflect.TypeOf(match.Match{})
	for i := 0; i < m.NumField(); i++ {
		f := m.Field(i)
		if !f.IsExported() {
			continue
		}
		if j, ok := recorded[f.Name]; ok {
			if _, ok := info[j]; !ok {
				t.Errorf("Match.%s is recorded as %q, which SiteInfo does not have", f.Name, j)
			}
			continue
		}
		if internal[f.Name] == "" {
			t.Errorf("Match.%s has no SiteInfo field (report/inspect.go) and no internal mark here", f.Name)
		}
	}
}
