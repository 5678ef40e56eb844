package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// TestRecordRoundTrip: what Record writes on a fused node, RecordedPlan
// reads back (validate and report judge a rewritten file by it), per kind.
func TestRecordRoundTrip(t *testing.T) {
	grid := &Grid{Dims: []int64{16, 16, 16}}
	cases := []struct {
		name   string
		plan   *Plan
		approx *ApproxOptions
		grid   []int64
		bound  string // attnopt.max_error
	}{
		{"exact", &Plan{Kind: Exact}, nil, nil, ""},
		{"window", &Plan{Kind: Window, Window: []int64{4, 4, 4}, Shift: []int64{0, 2, 0}, Grid: grid},
			&ApproxOptions{Window: []int64{4, 4, 4}, Shift: []int64{0, 2, 0}}, grid.Dims, ""},
		{"pool kv, measured", &Plan{Kind: PoolKV, Stride: 2, Grid: grid, MaxError: 0.05},
			&ApproxOptions{Pool: "kv", Stride: 2}, grid.Dims, "0.05"},
		{"pool qkv", &Plan{Kind: PoolQKV, Stride: 4, Upsample: "linear", Grid: grid},
			&ApproxOptions{Pool: "qkv", Stride: 4, Upsample: "linear"}, grid.Dims, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := &graph.Node{OpType: "FlashAttention", Domain: "attnopt"}
			Record(n, 7, c.plan)
			if id, ok := SiteOf(n); !ok || id != 7 {
				t.Errorf("SiteOf = %d, %v", id, ok)
			}
			kind, approx, g, ok := RecordedPlan(n)
			if !ok || kind != c.plan.Kind || !reflect.DeepEqual(approx, c.approx) || !reflect.DeepEqual(g, c.grid) {
				t.Errorf("RecordedPlan = %v %+v %v %v, want %v %+v %v", kind, approx, g, ok, c.plan.Kind, c.approx, c.grid)
			}
			if got := n.Meta(MetaMaxError); got != c.bound {
				t.Errorf("%s = %q, want %q", MetaMaxError, got, c.bound)
			}
		})
	}
	if _, _, _, ok := RecordedPlan(&graph.Node{OpType: "FlashAttention"}); ok {
		t.Error("a node without a recorded site reads as planned")
	}
	n := &graph.Node{}
	n.SetMeta(MetaSite, "-3")
	if _, ok := SiteOf(n); ok {
		t.Error("a negative site id was accepted")
	}
}

// TestPooledAndMinScores: pooling rounds each axis up; --min-scores leaves
// only exact sites of known size below it, and says so.
func TestPooledAndMinScores(t *testing.T) {
	for _, c := range []struct {
		grid []int64
		s    int64
		want []int64
	}{
		{[]int64{16, 16}, 2, []int64{8, 8}},
		{[]int64{15, 9, 1}, 4, []int64{4, 3, 1}},
		{[]int64{7}, 1, []int64{7}},
	} {
		if got := Pooled(c.grid, c.s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Pooled(%v, %d) = %v, want %v", c.grid, c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		plan *Plan
		min  int64
		left bool
	}{
		{"small exact site", &Plan{Kind: Exact, BytesBefore: 4608}, 1 << 20, true},
		{"large exact site", &Plan{Kind: Exact, BytesBefore: 1 << 30}, 1 << 20, false},
		{"exactly at the bound", &Plan{Kind: Exact, BytesBefore: 1 << 20}, 1 << 20, false},
		{"unknown size", &Plan{Kind: Exact, BytesBefore: -1}, 1 << 20, false},
		{"an approximation asked for", &Plan{Kind: PoolKV, BytesBefore: 4608}, 1 << 20, false},
		{"no bound", &Plan{Kind: Exact, BytesBefore: 4608}, 0, false},
	} {
		why := BelowMinScores(c.plan, c.min)
		if (why != "") != c.left || (c.left && !strings.Contains(why, "below --min-scores")) {
			t.Errorf("%s: BelowMinScores = %q, want left %v", c.name, why, c.left)
		}
	}
}
