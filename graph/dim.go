package graph

import (
	"sort"
	"strconv"
	"strings"
)

// Dim is a tensor dimension: a known size, a product of named symbols times a
// coefficient (C·s1·s2…, enough for the Reshape arithmetic of exporters), or
// unknown. The zero Dim is the known size 0.
type Dim struct {
	C       int64    // coefficient; the size itself when Syms is empty
	Syms    []string // sorted symbol names
	Unknown bool
}

// D returns a known dim.
func D(n int64) Dim { return Dim{C: n} }

// Sym returns a symbolic dim named s.
func Sym(s string) Dim { return Dim{C: 1, Syms: []string{s}} }

// parseDimParam reads a dim_param. A product of integers and names
// ("4*batch", as dynamo and Dim.String write them; "s**2" a power) is that
// product, and dynamo's exact quotients of products ("((batch*seq)//batch)")
// are the quotient, so a declared dim equals the one inference computes and
// reads as simply; anything else ("seq+1") is one opaque symbol of that name.
func parseDimParam(s string) Dim {
	// Longer names are not expressions an exporter writes; parsing them
	// could take quadratic time on hostile input.
	if len(s) > 256 {
		return Sym(s)
	}
	// Optimum declares "past_sequence_length + sequence_length": the same
	// sum inference names "past_sequence_length+sequence_length".
	s = strings.ReplaceAll(strings.ReplaceAll(s, " + ", "+"), " * ", "*")
	if d, ok := dimExpr(s); ok && !d.Static() {
		return d
	}
	return Sym(s)
}

// dimExpr parses a product, or the exact quotient of two, in parentheses
// or not.
func dimExpr(s string) (Dim, bool) {
	for len(s) > 1 && s[0] == '(' && s[len(s)-1] == ')' && balanced(s[1:len(s)-1]) {
		s = s[1 : len(s)-1]
	}
	if a, b, ok := strings.Cut(s, "//"); ok {
		x, ok1 := dimExpr(a)
		y, ok2 := dimExpr(b)
		if !ok1 || !ok2 {
			return UnknownDim, false
		}
		return x.Div(y)
	}
	// a factor may be an opaque sum ("past+seq", as Dim.Add names one)
	if strings.ContainsAny(s, "()/ ") || s == "" {
		return UnknownDim, false
	}
	d := D(1)
	for _, p := range strings.Split(strings.ReplaceAll(s, "**", "^"), "*") {
		base, exp, pow := strings.Cut(p, "^")
		n := int64(1)
		if pow {
			var err error
			if n, err = strconv.ParseInt(exp, 10, 64); err != nil || n < 1 || n > 8 {
				return UnknownDim, false
			}
		}
		var f Dim
		if v, err := strconv.ParseInt(base, 10, 64); err == nil {
			f = D(v)
		} else if base != "" {
			f = Sym(base)
		} else {
			return UnknownDim, false
		}
		for ; n > 0; n-- {
			d = d.Mul(f)
		}
	}
	return d, !d.Unknown
}

// balanced reports whether s's parentheses pair up.
func balanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// UnknownDim is a dimension nothing is known about.
var UnknownDim = Dim{Unknown: true}

// Static reports whether the dim is a known integer.
func (d Dim) Static() bool { return !d.Unknown && len(d.Syms) == 0 }

// Value returns the size and whether it is known.
func (d Dim) Value() (int64, bool) { return d.C, d.Static() }

func (d Dim) String() string {
	if d.Unknown {
		return "?"
	}
	if len(d.Syms) == 0 {
		return strconv.FormatInt(d.C, 10)
	}
	s := strings.Join(d.Syms, "*")
	if d.C != 1 {
		s = strconv.FormatInt(d.C, 10) + "*" + s
	}
	return s
}

// Equal reports whether two dims are provably the same size.
func (d Dim) Equal(e Dim) bool {
	if d.Unknown || e.Unknown || d.C != e.C || len(d.Syms) != len(e.Syms) {
		return false
	}
	for i := range d.Syms {
		if d.Syms[i] != e.Syms[i] {
			return false
		}
	}
	return true
}

// Mul multiplies two dims; overflow gives an unknown dim.
func (d Dim) Mul(e Dim) Dim {
	if d.Unknown || e.Unknown {
		if (d.Static() && d.C == 0) || (e.Static() && e.C == 0) {
			return D(0)
		}
		return UnknownDim
	}
	c, ok := mulCheck(d.C, e.C)
	if !ok {
		return UnknownDim
	}
	if c == 0 {
		return D(0)
	}
	syms := append(append([]string(nil), d.Syms...), e.Syms...)
	sort.Strings(syms)
	return Dim{C: c, Syms: syms}
}

// Div divides d by e when the quotient is exact and representable.
func (d Dim) Div(e Dim) (Dim, bool) {
	if d.Unknown || e.Unknown || e.C == 0 || d.C%e.C != 0 {
		return UnknownDim, false
	}
	rest := append([]string(nil), d.Syms...)
	for _, s := range e.Syms {
		i := indexOf(rest, s)
		if i < 0 {
			return UnknownDim, false
		}
		rest = append(rest[:i], rest[i+1:]...)
	}
	if len(rest) == 0 {
		rest = nil
	}
	return Dim{C: d.C / e.C, Syms: rest}, true
}

// Add adds dims. A sum involving symbols becomes one opaque symbol named by
// its sorted terms ("past+seq"), so two computations of the same sum compare
// equal (GPT-2's past + new key lengths).
func (d Dim) Add(e Dim) Dim {
	switch {
	case d.Unknown || e.Unknown:
		return UnknownDim
	case d.Static() && e.Static():
		return D(d.C + e.C)
	case e.Static() && e.C == 0:
		return d
	case d.Static() && d.C == 0:
		return e
	}
	terms := append(sumTerms(d), sumTerms(e)...)
	var c int64
	var syms []string
	for _, t := range terms {
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			c += v
		} else {
			syms = append(syms, t)
		}
	}
	sort.Strings(syms)
	if c != 0 {
		syms = append(syms, strconv.FormatInt(c, 10))
	}
	return Dim{C: 1, Syms: []string{strings.Join(syms, "+")}}
}

// Sub is d − e when it is representable: both known, e zero, the same
// dim, or e's terms all among the terms of the sum d ("past+seq" − "past"
// is "seq": a Range from the cache length to the total one).
func (d Dim) Sub(e Dim) (Dim, bool) {
	switch {
	case d.Unknown || e.Unknown:
		return UnknownDim, false
	case d.Static() && e.Static():
		return D(d.C - e.C), true
	case e.Static() && e.C == 0:
		return d, true
	case d.Equal(e):
		return D(0), true
	}
	rest := sumTerms(d)
	var c int64
	for _, t := range sumTerms(e) {
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			c -= v
			continue
		}
		i := indexOf(rest, t)
		if i < 0 {
			return UnknownDim, false
		}
		rest = append(rest[:i:i], rest[i+1:]...)
	}
	out := D(c)
	for _, t := range rest {
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			out = out.Add(D(v))
		} else {
			out = out.Add(parseDimParam(t))
		}
	}
	return out, !out.Unknown
}

// sumTerms splits a dim into the terms of a sum.
func sumTerms(d Dim) []string {
	if len(d.Syms) == 1 && d.C == 1 && strings.Contains(d.Syms[0], "+") {
		return strings.Split(d.Syms[0], "+")
	}
	return []string{d.String()}
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

func mulCheck(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == -1<<63) || (b == -1 && a == -1<<63) {
		return 0, false
	}
	return c, true
}

// Shape is a list of dims; a nil Shape on a Type means the rank is unknown.
type Shape []Dim

// StaticShape builds a Shape of known dims.
func StaticShape(dims ...int64) Shape {
	s := make(Shape, len(dims))
	for i, d := range dims {
		s[i] = D(d)
	}
	return s
}

// Numel multiplies all dims.
func (s Shape) Numel() Dim {
	n := D(1)
	for _, d := range s {
		n = n.Mul(d)
	}
	return n
}

// Ints returns the shape as integers when every dim is known.
func (s Shape) Ints() ([]int64, bool) {
	out := make([]int64, len(s))
	for i, d := range s {
		v, ok := d.Value()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Type is a tensor's element type and shape. Ranked is false when the rank
// is unknown (Shape is then nil).
type Type struct {
	DType  DType
	Shape  Shape
	Ranked bool
}

// Rank returns the rank, or -1 when unknown.
func (t Type) Rank() int {
	if !t.Ranked {
		return -1
	}
	return len(t.Shape)
}

func (t Type) String() string {
	if !t.Ranked {
		return t.DType.String() + "[*]"
	}
	return t.DType.String() + t.Shape.String()
}

// TensorOf is a ranked tensor type.
func TensorOf(dt DType, s Shape) Type { return Type{DType: dt, Shape: s, Ranked: true} }
