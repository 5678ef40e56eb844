package opdef

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Case is one attribute set of an op over Q, K, V (1, 1, 4, 4) and whether
// every reader accepts it. Cases derive from the table, one rule at a
// time around op.Base, so the Go schema and runtime (internal/opdef's
// tests) and the ONNX Runtime library's parser (kernels/tests/op_cases.inc,
// generated) are held to the same boundaries.
type Case struct {
	Name  string
	Attrs []*graph.Attr
	OK    bool
}

// Cases are op's conformance cases: the base set, then for each attribute
// its wrong type, its absence when required, and each side of its range.
func (op *Op) Cases() []Case {
	cs := []Case{{Name: "base", Attrs: op.Base, OK: true}}
	add := func(ok bool, name string, attrs []*graph.Attr) { cs = append(cs, Case{name, attrs, ok}) }
	for i := range op.Attrs {
		a := &op.Attrs[i]
		add(false, a.Name+" of the wrong type", op.with(wrongKind(a)))
		if a.Required {
			add(false, a.Name+" absent", op.without(a.Name))
		}
		switch a.Kind {
		case graph.AttrInt:
			op.intCases(a, add)
		case graph.AttrFloat:
			for _, f := range floatProbes {
				add(a.FloatOK(f), fmt.Sprintf("%s %g", a.Name, f), op.with(graph.FloatAttr(a.Name, f)))
			}
		case graph.AttrInts:
			op.intsCases(a, add)
		}
	}
	return cs
}

var floatProbes = []float32{0.5, 0, -1, -1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}

func wrongKind(a *Attr) *graph.Attr {
	if a.Kind == graph.AttrInt {
		return graph.FloatAttr(a.Name, 1)
	}
	return graph.IntAttr(a.Name, 1)
}

func (op *Op) intCases(a *Attr, add func(bool, string, []*graph.Attr)) {
	lo, hi := a.Bounds()
	probe := func(v int64, ok bool) {
		attrs := op.with(graph.IntAttr(a.Name, v))
		name := fmt.Sprintf("%s %d", a.Name, v)
		if ok && a.Needs != nil && v != a.Int {
			add(false, name+" without "+a.Needs.Attr+"="+fmt.Sprint(a.Needs.Value), attrs)
			attrs = op.with(graph.IntAttr(a.Name, v), graph.IntAttr(a.Needs.Attr, a.Needs.Value))
			name += " with " + a.Needs.Attr + "=" + fmt.Sprint(a.Needs.Value)
		}
		add(ok, name, attrs)
	}
	for _, v := range a.Values {
		probe(v.V, true)
	}
	if len(a.Values) == 0 && lo != NoLo {
		probe(lo, true)
		probe(lo+4, true)
	}
	if lo != NoLo {
		probe(lo-1, false)
	}
	if hi != NoHi {
		probe(hi+1, false)
	}
}

func (op *Op) intsCases(a *Attr, add func(bool, string, []*graph.Attr)) {
	base := op.baseInts(a)
	add(true, a.Name+" "+ListText(base), op.with(graph.IntsAttr(a.Name, base)))
	add(false, a.Name+" []", op.with(graph.IntsAttr(a.Name, nil)))
	if a.Len.Like != "" {
		longer := append([]int64{1}, base...)
		add(false, a.Name+" "+ListText(longer)+" longer than "+a.Len.Like, op.with(graph.IntsAttr(a.Name, longer)))
	} else if a.Len.Max > 0 {
		// Every attribute as long as this one grows with it: 1s in front
		// (0 for a shift) keep the token count.
		add(true, fmt.Sprintf("%d axes", a.Len.Max), op.axes(a.Name, a.Len.Max))
		add(false, fmt.Sprintf("%d axes", a.Len.Max+1), op.axes(a.Name, a.Len.Max+1))
	}
	if lo, _ := a.Bounds(); lo != NoLo {
		bad := append([]int64{lo - 1}, base[1:]...)
		add(false, a.Name+" "+ListText(bad), op.with(graph.IntsAttr(a.Name, bad)))
	}
}

// baseInts is the INTS attribute's base value, or for an optional one a
// valid value as long as its Like with a nonzero first entry.
func (op *Op) baseInts(a *Attr) []int64 {
	for _, b := range op.Base {
		if b.Name == a.Name {
			return b.Ints
		}
	}
	v := make([]int64, len(op.baseInts(op.Attr(a.Len.Like))))
	v[0] = 1
	return v
}

// axes pads the attribute and every one as long as it to n entries.
func (op *Op) axes(name string, n int) []*graph.Attr {
	var out []*graph.Attr
	for _, b := range op.Base {
		if a := op.Attr(b.Name); a.Kind == graph.AttrInts && (b.Name == name || a.Len.Like == name) {
			pad := make([]int64, n-len(b.Ints))
			for i := range pad {
				pad[i] = 1
			}
			out = append(out, graph.IntsAttr(b.Name, append(pad, b.Ints...)))
			continue
		}
		out = append(out, b)
	}
	return out
}

// with is op.Base with the given attributes set (replaced or added).
func (op *Op) with(set ...*graph.Attr) []*graph.Attr {
	var out []*graph.Attr
	for _, b := range op.Base {
		if !named(set, b.Name) {
			out = append(out, b)
		}
	}
	return append(out, set...)
}

// without is op.Base less one attribute.
func (op *Op) without(name string) []*graph.Attr {
	var out []*graph.Attr
	for _, b := range op.Base {
		if b.Name != name {
			out = append(out, b)
		}
	}
	return out
}

func named(as []*graph.Attr, name string) bool {
	for _, a := range as {
		if a.Name == name {
			return true
		}
	}
	return false
}
