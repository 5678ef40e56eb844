package opdef

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/graph"
)

// Bounds is the range of an INT value and of each INTS entry.
func (a *Attr) Bounds() (lo, hi int64) {
	if len(a.Values) == 0 {
		return a.Lo, a.Hi
	}
	lo, hi = a.Values[0].V, a.Values[0].V
	for _, v := range a.Values[1:] {
		lo, hi = min(lo, v.V), max(hi, v.V)
	}
	return lo, hi
}

// Must is what a value (an INTS attribute: each entry) must be, as the
// messages of every language say it: "0 or 1", ">= 0", "finite and > 0".
func (a *Attr) Must() string {
	switch a.Kind {
	case graph.AttrFloat:
		switch a.Rule {
		case FinitePositive:
			return "finite and > 0"
		case FiniteOrNegInf:
			return "-inf or finite"
		case FiniteNonNegative:
			return "finite and >= 0"
		case NonPositiveOrNegInf:
			return "-inf or finite and <= 0"
		}
		return "a float"
	}
	if len(a.Values) > 0 {
		parts := make([]string, len(a.Values))
		for i, v := range a.Values {
			parts[i] = strconv.FormatInt(v.V, 10)
			if v.Name != "" {
				parts[i] += " (" + v.Name + ")"
			}
		}
		last := len(parts) - 1
		if last == 0 {
			return parts[0]
		}
		return strings.Join(parts[:last], ", ") + " or " + parts[last]
	}
	switch lo, hi := a.Bounds(); {
	case lo == NoLo && hi == NoHi:
		return "any integer"
	case hi == NoHi:
		return ">= " + strconv.FormatInt(lo, 10)
	case lo == NoLo:
		return "<= " + strconv.FormatInt(hi, 10)
	default:
		return fmt.Sprintf("%d..%d", lo, hi)
	}
}

// FloatOK reports whether f is in the attribute's FLOAT range.
func (a *Attr) FloatOK(f float32) bool {
	x := float64(f)
	switch a.Rule {
	case FinitePositive:
		return x > 0 && !math.IsInf(x, 1)
	case FiniteOrNegInf:
		return !math.IsNaN(x) && !math.IsInf(x, 1)
	case FiniteNonNegative:
		return x >= 0 && !math.IsInf(x, 1)
	case NonPositiveOrNegInf:
		return x <= 0
	}
	return true
}

// Value is one attribute as read: present (Set) or its default.
type Value struct {
	Set  bool
	I    int64
	F    float32
	Ints []int64
}

// Values are an op's attributes as the kernels read them, in op.Attrs'
// order; an absent one holds its default (Set false).
type Values struct {
	op *Op
	v  []Value
}

func (vs Values) at(name string) Value {
	i := vs.op.Index(name)
	if i < 0 {
		panic("opdef: " + vs.op.Name + " has no attribute " + name) // a caller's typo, never input
	}
	return vs.v[i]
}

// Has reports whether the node set the attribute.
func (vs Values) Has(name string) bool { return vs.at(name).Set }

// Int, Float and Ints are an attribute's value or default.
func (vs Values) Int(name string) int64     { return vs.at(name).I }
func (vs Values) Float(name string) float32 { return vs.at(name).F }
func (vs Values) Ints(name string) []int64  { return vs.at(name).Ints }

// FloatText writes a float as the C++ messages do: -1, 0.5, inf, nan.
func FloatText(f float32) string {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 32)
}

// ListText writes a list as the C++ messages do: [2,2].
func ListText(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Read checks n's attributes against op, as the custom-op library does
// when ONNX Runtime creates the kernel (kernels/src/ort/op_attrs.cpp, the
// same rules and messages), and returns them with defaults filled.
// Attributes op does not name are ignored, as ONNX Runtime ignores them.
func (op *Op) Read(n *graph.Node) (Values, error) {
	vs := Values{op: op, v: make([]Value, len(op.Attrs))}
	for i := range op.Attrs {
		a := &op.Attrs[i]
		v, err := op.readOne(a, n.Attr(a.Name), vs)
		if err != nil {
			return Values{}, err
		}
		vs.v[i] = v
	}
	for i := range op.Attrs {
		a := &op.Attrs[i]
		if a.Needs == nil || vs.v[i].I == a.Int {
			continue
		}
		if got := vs.Int(a.Needs.Attr); got != a.Needs.Value {
			return Values{}, fmt.Errorf("%s %d needs %s=%d", a.Name, vs.v[i].I, a.Needs.Attr, a.Needs.Value)
		}
	}
	return vs, nil
}

func (op *Op) readOne(a *Attr, g *graph.Attr, vs Values) (Value, error) {
	if g == nil {
		if a.Required {
			return Value{}, fmt.Errorf("the %s attribute %q is required", a.Kind, a.Name)
		}
		v := Value{I: a.Int, F: a.Float}
		if a.Kind == graph.AttrInts && a.Len.Like != "" {
			v.Ints = make([]int64, len(vs.Ints(a.Len.Like))) // the computed default: zeros
		}
		return v, nil
	}
	if g.Kind != a.Kind {
		return Value{}, fmt.Errorf("attribute %q is %s, not %s", a.Name, g.Kind, a.Kind)
	}
	lo, hi := a.Bounds()
	switch a.Kind {
	case graph.AttrInt:
		if g.I < lo || g.I > hi {
			return Value{}, fmt.Errorf("%s %d must be %s", a.Name, g.I, a.Must())
		}
		return Value{Set: true, I: g.I}, nil
	case graph.AttrFloat:
		if !a.FloatOK(g.F) {
			return Value{}, fmt.Errorf("%s %s must be %s", a.Name, FloatText(g.F), a.Must())
		}
		return Value{Set: true, F: g.F}, nil
	}
	l := g.Ints
	if a.Len.Max > 0 && (len(l) < a.Len.Min || len(l) > a.Len.Max) {
		return Value{}, fmt.Errorf("%s %s must have %d to %d entries", a.Name, ListText(l), a.Len.Min, a.Len.Max)
	}
	if like := a.Len.Like; like != "" && len(l) != len(vs.Ints(like)) {
		return Value{}, fmt.Errorf("%s %s and %s %s differ in length", a.Name, ListText(l), like, ListText(vs.Ints(like)))
	}
	for _, x := range l {
		if x < lo || x > hi {
			return Value{}, fmt.Errorf("%s %s entries must be %s", a.Name, ListText(l), a.Must())
		}
	}
	return Value{Set: true, Ints: append([]int64(nil), l...)}, nil
}

// HeadDimOK reports whether the kernels take head size d.
func HeadDimOK(d int64) bool { return d >= HeadDimMin && d <= HeadDimMax }

// HeadDims checks the head sizes against the kernels' limit, with the C
// ABI check's and ONNX Runtime library's message.
func HeadDims(dqk, dv int64) error {
	if !HeadDimOK(dqk) || !HeadDimOK(dv) {
		return fmt.Errorf("head dims must be %d..%d, got Dqk %d Dv %d", HeadDimMin, HeadDimMax, dqk, dv)
	}
	return nil
}

// TypesText lists types as messages do: "float32, float16 or bfloat16".
func TypesText(ts []graph.DType) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// Input returns the named input of op, nil if none.
func (op *Op) Input(name string) *Input {
	for i := range op.Inputs {
		if op.Inputs[i].Name == name {
			return &op.Inputs[i]
		}
	}
	return nil
}

// Takes reports whether the input accepts element type t.
func (in *Input) Takes(t graph.DType) bool {
	for _, x := range in.Types {
		if x == t {
			return true
		}
	}
	return false
}

// Defaults are op's attributes all at their defaults, none set: the start
// of a typed value's Values (attrs_gen.go).
func (op *Op) Defaults() Values {
	vs := Values{op: op, v: make([]Value, len(op.Attrs))}
	for i := range op.Attrs {
		a := &op.Attrs[i]
		vs.v[i] = Value{I: a.Int, F: a.Float}
	}
	return vs
}

// put stores one typed value, set when a rewrite writes it (writes).
func (vs *Values) put(name string, v Value) {
	i := vs.op.Index(name)
	if i < 0 {
		panic("opdef: " + vs.op.Name + " has no attribute " + name) // generated code out of step with the table
	}
	a := &vs.op.Attrs[i]
	v.Set = a.Always || a.Required || !a.isDefault(v, *vs)
	vs.v[i] = v
}

// isDefault reports whether v is the attribute's default (an INTS one's:
// zeros as long as its Like, the kernels' computed default).
func (a *Attr) isDefault(v Value, vs Values) bool {
	switch a.Kind {
	case graph.AttrInt:
		return v.I == a.Int
	case graph.AttrFloat:
		return v.F == a.Float || (math.IsNaN(float64(v.F)) && math.IsNaN(float64(a.Float)))
	}
	if a.Len.Like == "" || len(v.Ints) != len(vs.Ints(a.Len.Like)) {
		return false
	}
	for _, x := range v.Ints {
		if x != 0 {
			return false
		}
	}
	return true
}

// Write is vs as a rewrite writes it: in the table's order, every
// attribute that is required, always written or off its default, so the
// table alone decides what a fused node carries (docs/ops.md's last
// column).
func (op *Op) Write(vs Values) []*graph.Attr {
	if vs.op != op {
		panic("opdef: " + op.Name + " cannot write another op's values") // a caller's mix-up, never input
	}
	var out []*graph.Attr
	for i := range op.Attrs {
		a, v := &op.Attrs[i], vs.v[i]
		if !v.Set {
			continue
		}
		switch a.Kind {
		case graph.AttrInt:
			out = append(out, graph.IntAttr(a.Name, v.I))
		case graph.AttrFloat:
			out = append(out, graph.FloatAttr(a.Name, v.F))
		default:
			out = append(out, graph.IntsAttr(a.Name, append([]int64(nil), v.Ints...)))
		}
	}
	return out
}

// flagInt is a flag's INT value.
func flagInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
