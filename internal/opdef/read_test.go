package opdef

import (
	"math"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

func node(op *Op, attrs []*graph.Attr) *graph.Node {
	return &graph.Node{OpType: op.Name, Domain: Domain, Attrs: attrs}
}

// TestTableIsWellFormed: what the readers and generators assume of a row.
func TestTableIsWellFormed(t *testing.T) {
	for _, op := range Ops() {
		seen := map[string]bool{}
		for i := range op.Attrs {
			a := &op.Attrs[i]
			if seen[a.Name] {
				t.Errorf("%s: %s twice", op.Name, a.Name)
			}
			seen[a.Name] = true
			switch a.Kind {
			case graph.AttrInt, graph.AttrFloat, graph.AttrInts:
			default:
				t.Errorf("%s.%s: kind %s has no reader", op.Name, a.Name, a.Kind)
			}
			for j, v := range a.Values {
				if v.V != a.Values[0].V+int64(j) {
					t.Errorf("%s.%s: values are not consecutive (the C++ reader checks a range)", op.Name, a.Name)
				}
			}
			if lo, hi := a.Bounds(); a.Kind == graph.AttrInt && !a.Required && (a.Int < lo || a.Int > hi) {
				t.Errorf("%s.%s: default %d outside %d..%d", op.Name, a.Name, a.Int, lo, hi)
			}
			if a.Kind == graph.AttrFloat && !a.Required && a.Computed == "" && !a.FloatOK(a.Float) {
				t.Errorf("%s.%s: default %g is not %s", op.Name, a.Name, a.Float, a.Must())
			}
			if a.Needs != nil && (!seen[a.Needs.Attr] || op.Attr(a.Needs.Attr).Kind != graph.AttrInt) {
				t.Errorf("%s.%s needs %s, which is not an INT row above it", op.Name, a.Name, a.Needs.Attr)
			}
			if l := a.Len.Like; l != "" && (!seen[l] || op.Attr(l).Kind != graph.AttrInts) {
				t.Errorf("%s.%s is as long as %s, which is not an INTS row above it", op.Name, a.Name, l)
			}
			if a.Doc == "" || (a.Written == "") != (a.Always || a.Required) {
				t.Errorf("%s.%s has no doc, or Written where it is always written or none where it is not", op.Name, a.Name)
			}
		}
		if _, err := op.Read(node(op, op.Base)); err != nil {
			t.Errorf("%s: its base is refused: %v", op.Name, err)
		}
	}
}

// TestCases: Read accepts and refuses every conformance case as stated,
// and the cases probe each attribute at least once on each side.
func TestCases(t *testing.T) {
	for _, op := range Ops() {
		probed := map[string][2]int{}
		for _, c := range op.Cases() {
			_, err := op.Read(node(op, c.Attrs))
			if (err == nil) != c.OK {
				t.Errorf("%s %q: err %v, want ok %v", op.Name, c.Name, err, c.OK)
			}
			for _, a := range c.Attrs {
				p := probed[a.Name]
				if c.OK {
					p[0]++
				} else {
					p[1]++
				}
				probed[a.Name] = p
			}
		}
		for _, a := range op.Attrs {
			if p := probed[a.Name]; p[0] == 0 || p[1] == 0 {
				t.Errorf("%s.%s: %d accepted and %d refused cases", op.Name, a.Name, p[0], p[1])
			}
		}
	}
}

// TestReadMessages: the words of each rule, as the C++ reader writes them
// (kernels/src/ort/op_attrs.cpp; test_ort_hostile matches parts of them).
func TestReadMessages(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		op    *Op
		attrs []*graph.Attr
		want  string
	}{
		{FlashAttention, []*graph.Attr{graph.FloatAttr("causal", 1)}, `attribute "causal" is FLOAT, not INT`},
		{FlashAttention, []*graph.Attr{graph.IntAttr("causal", 2)}, "causal 2 must be 0 or 1"},
		{FlashAttention, []*graph.Attr{graph.FloatAttr("scale", -1)}, "scale -1 must be finite and > 0"},
		{FlashAttention, []*graph.Attr{graph.FloatAttr("scale", inf)}, "scale inf must be finite and > 0"},
		{FlashAttention, []*graph.Attr{graph.IntAttr("sliding_window", 4)}, "sliding_window 4 needs causal=1"},
		{FlashAttention, []*graph.Attr{graph.IntAttr("sliding_window", -1)}, "sliding_window -1 must be >= 0"},
		{FlashAttention, []*graph.Attr{graph.IntAttr("empty_rows", 3)}, "empty_rows 3 must be 0 (zero), 1 (literal) or 2 (literal_zero)"},
		{FlashAttention, []*graph.Attr{graph.FloatAttr("mask_fill", inf)}, "mask_fill inf must be -inf or finite"},
		{WindowAttention, nil, `the FLOAT attribute "scale" is required`},
		{WindowAttention, []*graph.Attr{graph.FloatAttr("scale", 1), graph.IntsAttr("spatial_shape", []int64{1, 1, 1, 1}), graph.IntsAttr("window", []int64{1})},
			"spatial_shape [1,1,1,1] must have 1 to 3 entries"},
		{WindowAttention, []*graph.Attr{graph.FloatAttr("scale", 1), graph.IntsAttr("spatial_shape", []int64{2, 2}), graph.IntsAttr("window", []int64{2})},
			"window [2] and spatial_shape [2,2] differ in length"},
		{WindowAttention, []*graph.Attr{graph.FloatAttr("scale", 1), graph.IntsAttr("spatial_shape", []int64{2, 0}), graph.IntsAttr("window", []int64{2, 2})},
			"spatial_shape [2,0] entries must be >= 1"},
	} {
		_, err := c.op.Read(node(c.op, c.attrs))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %v: err %v, want %q", c.op.Name, c.attrs, err, c.want)
		}
	}
}

// TestReadDefaults: an absent attribute reads as the table's default.
func TestReadDefaults(t *testing.T) {
	vs, err := FlashAttention.Read(node(FlashAttention, nil))
	if err != nil {
		t.Fatal(err)
	}
	if vs.Has(AttrScale) || vs.Int(AttrCausal) != 0 || !math.IsInf(float64(vs.Float(AttrMaskFill)), -1) {
		t.Errorf("defaults: scale set %v, causal %d, mask_fill %g", vs.Has(AttrScale), vs.Int(AttrCausal), vs.Float(AttrMaskFill))
	}
	ws, err := WindowAttention.Read(node(WindowAttention, WindowAttention.Base))
	if err != nil {
		t.Fatal(err)
	}
	if s := ws.Ints(AttrShift); len(s) != 2 || s[0] != 0 || s[1] != 0 {
		t.Errorf("shift defaults to %v, want [0 0]", s)
	}
}

func TestHeadDims(t *testing.T) {
	for _, c := range []struct {
		dqk, dv int64
		ok      bool
	}{{HeadDimMin, HeadDimMin, true}, {HeadDimMax, HeadDimMax, true}, {HeadDimMax + 1, 4, false}, {4, HeadDimMax + 1, false}, {HeadDimMin - 1, 4, false}} {
		if err := HeadDims(c.dqk, c.dv); (err == nil) != c.ok {
			t.Errorf("Dqk %d Dv %d: %v", c.dqk, c.dv, err)
		}
	}
	if err := HeadDims(300, 4); err == nil || err.Error() != "head dims must be 1..256, got Dqk 300 Dv 4" {
		t.Errorf("message %v", err)
	}
}

// TestFloatRules: each FLOAT range, on the probes the conformance cases
// use, with the words every language's message gives. A rule no row uses
// yet (FiniteNonNegative, for a bound 0 turns off) is held here.
func TestFloatRules(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct {
		rule FloatRule
		must string
		ok   []float32
		bad  []float32
	}{
		{AnyFloat, "a float", []float32{0.5, 0, -1, inf, -inf, nan}, nil},
		{FinitePositive, "finite and > 0", []float32{0.5, 1e30}, []float32{0, -1, inf, -inf, nan}},
		{FiniteOrNegInf, "-inf or finite", []float32{0.5, 0, -1e30, -inf}, []float32{inf, nan}},
		{FiniteNonNegative, "finite and >= 0", []float32{0, 0.5, 1e30}, []float32{-1, -1e30, inf, -inf, nan}},
	} {
		a := &Attr{Name: "x", Kind: graph.AttrFloat, Rule: c.rule}
		if got := a.Must(); got != c.must {
			t.Errorf("rule %d: Must %q, want %q", c.rule, got, c.must)
		}
		for _, f := range c.ok {
			if !a.FloatOK(f) {
				t.Errorf("%s: %g refused", c.must, f)
			}
		}
		for _, f := range c.bad {
			if a.FloatOK(f) {
				t.Errorf("%s: %g accepted", c.must, f)
			}
		}
	}
}
