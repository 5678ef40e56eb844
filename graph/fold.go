package graph

import "math"

// Constant folding of small tensors: the scale arithmetic of exporters
// (Shape → Slice → Cast → Sqrt → Div), symbolic dim arithmetic, mask fills.

var unaryFold = map[string]func(float64) float64{
	"Sqrt": math.Sqrt, "Neg": func(x float64) float64 { return -x },
	"Reciprocal": func(x float64) float64 { return 1 / x }, "Exp": math.Exp,
	"Log": math.Log, "Abs": math.Abs, "Floor": math.Floor, "Ceil": math.Ceil,
	"Identity": func(x float64) float64 { return x }, "Tanh": math.Tanh, "Erf": math.Erf,
	"Not": func(x float64) float64 {
		if x == 0 {
			return 1
		}
		return 0
	},
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

var binaryFold = map[string]func(a, b float64) float64{
	"Add": func(a, b float64) float64 { return a + b },
	"Sub": func(a, b float64) float64 { return a - b },
	"Mul": func(a, b float64) float64 { return a * b },
	"Div": func(a, b float64) float64 { return a / b },
	"Pow": math.Pow, "Max": math.Max, "Min": math.Min,
	// Mod with fmod=0 takes the divisor's sign (integer shape arithmetic).
	"Mod":            func(a, b float64) float64 { return a - b*math.Floor(a/b) },
	"Equal":          func(a, b float64) float64 { return boolf(a == b) },
	"Less":           func(a, b float64) float64 { return boolf(a < b) },
	"Greater":        func(a, b float64) float64 { return boolf(a > b) },
	"LessOrEqual":    func(a, b float64) float64 { return boolf(a <= b) },
	"GreaterOrEqual": func(a, b float64) float64 { return boolf(a >= b) },
	"And":            func(a, b float64) float64 { return boolf(a != 0 && b != 0) },
	"Or":             func(a, b float64) float64 { return boolf(a != 0 || b != 0) },
}

// foldArith folds elementwise ops: symbolically on integer shape vectors,
// numerically on small constants.
func foldArith(c *ictx) {
	n, out := c.n, c.out(0)
	if out == nil || len(n.Inputs) == 0 {
		return
	}
	// Shape vectors fold symbolically: arithmetic on them, and Equal of them
	// (a bool result over integer operands).
	if len(n.Inputs) == 2 && (out.Type.DType.IsInt() || n.OpType == "Equal") {
		if foldSymbolic(n.OpType, n.Input(0), n.Input(1), out) {
			return
		}
	}
	var f func([]float64) float64
	if u := unaryFold[n.OpType]; u != nil && len(n.Inputs) == 1 {
		f = func(x []float64) float64 { return u(x[0]) }
	} else if b := binaryFold[n.OpType]; b != nil && len(n.Inputs) == 2 {
		f = func(x []float64) float64 {
			if n.OpType == "Div" && out.Type.DType.IsInt() && x[1] != 0 {
				return math.Floor(x[0] / x[1])
			}
			return b(x[0], x[1])
		}
	}
	if f == nil {
		return
	}
	foldElementwise(n.Inputs, out, f)
}

// foldSymbolic applies + - * / to 1-D or scalar dim vectors.
func foldSymbolic(op string, a, b, out *Value) bool {
	x, ok1 := a.IntContent()
	y, ok2 := b.IntContent()
	if !ok1 || !ok2 || (len(x) != len(y) && len(x) != 1 && len(y) != 1) {
		return false
	}
	n := max(len(x), len(y))
	if len(x) == 0 || len(y) == 0 {
		n = 0 // an empty vector broadcast against one entry is empty
	}
	res := make([]Dim, n)
	for i := range res {
		p, q := x[min(i, len(x)-1)], y[min(i, len(y)-1)]
		switch op {
		case "Mul":
			res[i] = p.Mul(q)
		case "Add":
			res[i] = p.Add(q)
		case "Sub":
			if q.Static() {
				res[i] = p.Add(D(-q.C))
			} else {
				res[i] = UnknownDim
			}
		case "Equal":
			switch {
			case p.Equal(q):
				res[i] = D(1)
			case p.Static() && q.Static(), !p.Unknown && !p.Static() && q.Static() && q.C < 0,
				!q.Unknown && !q.Static() && p.Static() && p.C < 0:
				// Different sizes, or a symbolic size against a negative sentinel.
				res[i] = D(0)
			default:
				// Undecided here; the other entries may still be known
				// (Expand targets test each entry against -1).
				res[i] = UnknownDim
			}
		case "Div":
			d, ok := p.Div(q)
			if !ok {
				if pv, ok1 := p.Value(); ok1 {
					if qv, ok2 := q.Value(); ok2 && qv != 0 {
						d = D(floorDiv(pv, qv))
					}
				}
			}
			res[i] = d
		default:
			return false
		}
	}
	out.Sym = res
	return true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// foldElementwise evaluates f with numpy broadcasting over small constants.
func foldElementwise(ins []*Value, out *Value, f func([]float64) float64) {
	vals := make([][]float64, len(ins))
	dims := make([][]int64, len(ins))
	for i, v := range ins {
		x, ok := v.Floats()
		if !ok {
			return
		}
		vals[i], dims[i] = x, shapeDims(v)
		if numel(dims[i]) != int64(len(x)) {
			return
		}
	}
	var shapes []Shape
	for _, d := range dims {
		shapes = append(shapes, StaticShape(d...))
	}
	od, ok := broadcast(shapes...).Ints()
	if !ok {
		return
	}
	total := numel(od)
	if total < 0 || total > maxFold {
		return
	}
	res := make([]float64, total)
	args := make([]float64, len(ins))
	idx := make([]int64, len(od))
	for k := int64(0); k < total; k++ {
		rem := k
		for ax := len(od) - 1; ax >= 0; ax-- {
			idx[ax] = rem % od[ax]
			rem /= od[ax]
		}
		for i := range ins {
			args[i] = vals[i][broadcastIndex(idx, dims[i])]
		}
		res[k] = f(args)
	}
	dt := out.Type.DType
	if dt.IsInt() {
		ds := make([]Dim, len(res))
		for i, x := range res {
			ds[i] = D(int64(x))
		}
		out.Sym = ds
		return
	}
	if raw, ok := EncodeFloats(dt, res); ok {
		out.Const = NewTensor("", dt, od, raw)
	}
}

func broadcastIndex(idx []int64, dims []int64) int64 {
	off := len(idx) - len(dims)
	var flat int64
	for i, d := range dims {
		x := idx[off+i]
		if d == 1 {
			x = 0
		}
		flat = flat*d + x
	}
	return flat
}

func foldWhere(c *ictx) {
	cond := c.in(0)
	if cond == nil || c.out(0) == nil {
		return
	}
	// Symbolic selection between shape vectors (Expand with -1 entries).
	if cs, ok := cond.IntContent(); ok {
		x, okX := c.in(1).IntContent()
		y, okY := c.in(2).IntContent()
		if okX && okY && len(x) == len(cs) && len(y) == len(cs) {
			res := make([]Dim, len(cs))
			for i, b := range cs {
				switch v, known := b.Value(); {
				case known && v != 0:
					res[i] = x[i]
				case known:
					res[i] = y[i]
				case x[i].Equal(y[i]):
					res[i] = x[i]
				default:
					res[i] = UnknownDim
				}
			}
			c.out(0).Sym = res
			return
		}
	}
	foldElementwise(c.n.Inputs, c.out(0), func(x []float64) float64 {
		if x[0] != 0 {
			return x[1]
		}
		return x[2]
	})
}
