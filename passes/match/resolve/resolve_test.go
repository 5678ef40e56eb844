package resolve

import (
	"math"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/posmask"
)

// val is a tensor of the given dims (symbolic by name, or static).
func val(name string, dt graph.DType, dims ...graph.Dim) *graph.Value {
	return &graph.Value{Name: name, Type: graph.Type{DType: dt, Ranked: true, Shape: graph.Shape(dims)}}
}

func fill(x float64) *float64 { return &x }

// site is a rank-4 (1, 1, nq, nk) site with no mask yet.
func site(nq, nk graph.Dim) Site {
	return Site{Rank: 4, QLen: nq, KVLen: nk, DType: graph.Float32}
}

// TestCausal: each kind of candidate the peels record becomes the op's
// causal flag, a sliding window, a per-key ALiBi term, or stays the mask
// term it was, and the fills and the form follow.
func TestCausal(t *testing.T) {
	n, p := graph.Sym("n"), graph.Sym("p")
	nk := n.Add(p) // keys after a cache of p
	one := graph.D(1)
	tri := val("tri", graph.Bool, one, one, n, n)
	triCache := val("tri_cache", graph.Bool, one, one, n, nk)
	bias := val("bias", graph.Float32, one, one, n, n)
	band := val("band", graph.Bool, one, one, n, n)
	slopes := val("slopes", graph.Float32, one, graph.Sym("h"), one, one)
	ramp := val("ramp", graph.Float32, one, one, one, n)
	row := &graph.Tensor{Dims: []int64{1, 1, 2, 2}}
	pad := masks.Term{Kind: masks.Bool, Value: val("pad", graph.Bool, graph.Sym("b"), one, one, n), Form: masks.FormWhere}
	boolTerm := func(v *graph.Value) masks.Term {
		return masks.Term{Kind: masks.Bool, Value: v, Form: masks.FormWhere}
	}
	finfo := -3.4028234663852886e38
	cases := []struct {
		name   string
		site   Site
		cands  Candidates
		causal bool
		window int64
		masks  []string // values of the terms, in order
		form   masks.Form
		fill   *float64 // the causal fill; nil: −inf
		once   bool
		kept   bool
	}{
		{name: "a triangle at the op's alignment is causal",
			site:   site(n, n),
			cands:  Candidates{Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(0)}, Value: tri, Term: boolTerm(tri)}}},
			causal: true, form: masks.FormCausalWhere},
		{name: "a cache's triangle, offset p, is causal on (n, n+p)",
			site:   site(n, nk),
			cands:  Candidates{Terms: []Candidate{{Tri: posmask.Tri{Off: p}, Value: triCache, Term: boolTerm(triCache), Fill: fill(finfo), Once: true}}},
			causal: true, form: masks.FormCausalWhere, fill: fill(finfo), once: true},
		{name: "a triangle at another offset stays a mask",
			site:  site(n, n),
			cands: Candidates{Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(1)}, Value: tri, Term: boolTerm(tri)}}},
			masks: []string{"tri"}, form: masks.FormWhere, kept: true},
		{name: "a padding term beside causal keeps the form of the first term",
			site:   Site{Rank: 4, QLen: n, KVLen: n, Masks: []masks.Term{pad}, Form: masks.FormWhere},
			cands:  Candidates{Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(0)}, Value: tri, Term: boolTerm(tri)}}},
			causal: true, masks: []string{"pad"}, form: masks.FormWhere},
		{name: "a relative-position bias that drops a triangle: causal, and kept as a mask without its fill",
			site: site(n, n),
			cands: Candidates{Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(0)}, Value: bias, Keep: true, Fill: fill(-1e9),
				Term: masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormAdd}}}},
			causal: true, masks: []string{"bias"}, form: masks.FormAdd, kept: true},
		{name: "a folded ALiBi bias leaves its per-key row",
			site: site(n, n),
			cands: Candidates{Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(0)}, Value: bias, Fill: fill(finfo),
				Term: masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormAdd},
				Rest: &masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormAdd, KeyRow: true}}}},
			causal: true, masks: []string{"bias"}, form: masks.FormAdd, fill: fill(finfo)},
		{name: "two causal terms add their fills in float32: finfo.min twice is −inf",
			site: site(n, n),
			cands: Candidates{Terms: []Candidate{
				{Tri: posmask.Tri{Off: graph.D(0)}, Value: tri, Term: boolTerm(tri), Fill: fill(finfo)},
				{Tri: posmask.Tri{Off: graph.D(0)}, Value: bias, Term: masks.Term{Kind: masks.Additive, Value: bias, Form: masks.FormAdd}, Fill: fill(finfo)},
			}},
			causal: true, form: masks.FormCausalWhere},
		{name: "a band with the causal fill is the sliding window",
			site: site(n, n),
			cands: Candidates{
				Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(0)}, Value: band, Term: boolTerm(band), Band: true}},
				Band:  &Candidate{Tri: posmask.Tri{Off: graph.D(-4), Neg: true}, Value: band, Term: boolTerm(band)},
			},
			causal: true, window: 4, form: masks.FormWhere, kept: true},
		{name: "a band with another fill stays a mask",
			site: site(n, n),
			cands: Candidates{
				Terms: []Candidate{{Tri: posmask.Tri{Off: graph.D(0)}, Value: band, Term: boolTerm(band), Band: true}},
				Band:  &Candidate{Tri: posmask.Tri{Off: graph.D(-4), Neg: true}, Value: band, Term: boolTerm(band), Fill: fill(-1e4)},
			},
			causal: true, masks: []string{"band"}, form: masks.FormWhere, kept: true},
		{name: "an ALiBi ramp −|j − i| holds per key on a causal site with Nq = Nk",
			site: site(n, n),
			cands: Candidates{Terms: []Candidate{
				{Tri: posmask.Tri{Off: graph.D(0)}, Value: tri, Term: boolTerm(tri)},
				{Value: ramp, Term: masks.Term{Kind: masks.Additive, Value: ramp, Form: masks.FormAdd},
					Ramp: &Ramp{Abs: true, Term: masks.Term{Kind: masks.Additive, Value: slopes, Ramp: ramp, Form: masks.FormAdd}}},
			}},
			causal: true, masks: []string{"slopes"}, form: masks.FormAdd},
		{name: "the same ramp without causal stays the graph's term",
			site: site(n, n),
			cands: Candidates{Terms: []Candidate{
				{Value: ramp, Term: masks.Term{Kind: masks.Additive, Value: ramp, Form: masks.FormAdd},
					Ramp: &Ramp{Abs: true, Term: masks.Term{Kind: masks.Additive, Value: slopes, Ramp: ramp, Form: masks.FormAdd}}},
			}},
			masks: []string{"ramp"}, form: masks.FormAdd, kept: true},
		{name: "a constant ramp row needs causal",
			site: site(n, n),
			cands: Candidates{Terms: []Candidate{
				{Value: ramp, Term: masks.Term{Kind: masks.Additive, Value: ramp, Form: masks.FormAdd},
					Ramp: &Ramp{Row: row, Term: masks.Term{Kind: masks.Additive, Value: ramp, KeyRow: true, Form: masks.FormAdd}}},
			}},
			masks: []string{"ramp"}, form: masks.FormAdd, kept: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := append([]masks.Term(nil), c.site.Masks...)
			r := Causal(c.site, c.cands)
			var got []string
			for _, m := range r.Masks {
				got = append(got, m.Value.Name)
			}
			if r.Causal != c.causal || r.SlidingWindow != c.window || r.Form != c.form || r.Kept != c.kept || r.Fills.Once != c.once {
				t.Errorf("causal %v window %d form %q kept %v once %v, want %v %d %q %v %v", r.Causal, r.SlidingWindow, r.Form, r.Kept, r.Fills.Once, c.causal, c.window, c.form, c.kept, c.once)
			}
			if len(got) != len(c.masks) {
				t.Fatalf("masks %v, want %v", got, c.masks)
			}
			for i := range got {
				if got[i] != c.masks[i] {
					t.Errorf("masks %v, want %v", got, c.masks)
				}
			}
			if masks.FillValue(r.Fills.Causal) != masks.FillValue(c.fill) {
				t.Errorf("causal fill %g, want %g", masks.FillValue(r.Fills.Causal), masks.FillValue(c.fill))
			}
			// The site read is never written.
			for i := range before {
				if c.site.Masks[i].Value != before[i].Value || c.site.Masks[i].KeyRow != before[i].KeyRow {
					t.Errorf("Causal wrote into the site's mask %d", i)
				}
			}
		})
	}
}

// TestRows: what a row that sees no key yields, from the site's mask,
// causal flag, fills and guard (docs/fully-masked-rows.md's table).
func TestRows(t *testing.T) {
	n, m := graph.Sym("n"), graph.Sym("m")
	one := graph.D(1)
	boolMask := masks.Term{Kind: masks.Bool, Value: val("pad", graph.Bool, one, one, one, n)}
	finfoMask := boolMask
	finfoMask.Fill = fill(-3.4e38)
	finite := masks.Term{Kind: masks.Additive, Value: val("ext", graph.Float32, one, one, one, n), Fill: fill(-1e4)}
	funnel := masks.Term{Kind: masks.Additive, Value: val("funnel", graph.Float32, one, one, one, n), Floor: -1e6, Negated: true}
	inf := math.Inf(-1)
	cases := []struct {
		name string
		site Site
		want masks.Rows
	}{
		{"no mask, not causal: every row sees a key", site(n, n), masks.Rows{}},
		{"causal with Nq ≤ Nk: every row sees a key", Site{Rank: 4, QLen: graph.D(3), KVLen: graph.D(5), Causal: true}, masks.Rows{}},
		{"causal, Nq and Nk unrelated: literal rows under the causal fill",
			Site{Rank: 4, QLen: n, KVLen: m, Causal: true, Fills: masks.Fills{Causal: fill(-3.4e38)}},
			masks.Rows{Empty: masks.EmptyLiteral, MaskFill: inf, CausalFill: -3.4e38}},
		{"a bool mask under −inf: literal, NaN rows",
			Site{Rank: 4, QLen: n, KVLen: n, Masks: []masks.Term{boolMask}},
			masks.Rows{Empty: masks.EmptyLiteral, MaskFill: inf, CausalFill: inf}},
		{"the same, guarded: zeros, stated as the guard",
			Site{Rank: 4, QLen: n, KVLen: n, Masks: []masks.Term{boolMask}, ZeroRowGuard: true},
			masks.Rows{Guarded: true}},
		{"a bool mask filled with finfo.min",
			Site{Rank: 4, QLen: n, KVLen: n, Masks: []masks.Term{finfoMask}},
			masks.Rows{Empty: masks.EmptyLiteral, MaskFill: -3.4e38, CausalFill: inf}},
		{"a finite additive fill: the floor at half of it",
			Site{Rank: 4, QLen: n, KVLen: n, Masks: []masks.Term{finite}},
			masks.Rows{Empty: masks.EmptyLiteral, MaskFill: inf, CausalFill: inf, MaskFloor: -5e3}},
		{"Funnel's subtracted fill: the floor at half of it",
			Site{Rank: 4, QLen: n, KVLen: n, Masks: []masks.Term{funnel}},
			masks.Rows{Empty: masks.EmptyLiteral, MaskFill: inf, CausalFill: inf, MaskFloor: -5e5}},
		{"a float16 source rounds its literal rows",
			Site{Rank: 4, QLen: n, KVLen: n, DType: graph.Float16, Masks: []masks.Term{finfoMask}, Fills: masks.Fills{DType: graph.Float16}},
			masks.Rows{Empty: masks.EmptyLiteral, MaskFill: -3.4e38, CausalFill: inf, Round: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Rows(c.site); got != c.want {
				t.Errorf("Rows = %+v, want %+v", got, c.want)
			}
		})
	}
}
