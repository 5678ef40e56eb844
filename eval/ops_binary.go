package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// binaryOp applies numpy-broadcast elementwise arithmetic; the result keeps a's
// type. ff works on floats (in float64 for accuracy), fi on ints.
func binaryOp(a, b *Tensor, threads int, ff func(x, y float64) float64, fi func(x, y int64) (int64, error)) (*Tensor, error) {
	shape, err := broadcastShapes(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	out := NewTensor(a.DType, shape)
	sa, sb := bcastStrides(a.Shape, shape), bcastStrides(b.Shape, shape)
	switch {
	case a.F != nil:
		bf := b.F
		if bf == nil {
			bf = toF32(b)
		}
		if sameShape(a.Shape, b.Shape) {
			parallelFor(len(out.F), elemThreads(len(out.F), threads), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					out.F[i] = float32(ff(float64(a.F[i]), float64(bf[i])))
				}
			})
		} else {
			walk2(shape, sa, sb, func(o, i, j int) { out.F[o] = float32(ff(float64(a.F[i]), float64(bf[j]))) })
		}
	case a.I != nil:
		if fi == nil {
			return nil, fmt.Errorf("not defined for %s", a.DType)
		}
		bi := b.ints()
		var ferr error
		walk2(shape, sa, sb, func(o, i, j int) {
			v, err := fi(a.I[i], bi[j])
			if err != nil {
				ferr = err
			}
			out.I[o] = v
		})
		if ferr != nil {
			return nil, ferr
		}
	default:
		return nil, fmt.Errorf("not defined for %s", a.DType)
	}
	return out, nil
}

func toF32(t *Tensor) []float32 {
	out := make([]float32, t.Numel())
	for i := range out {
		out[i] = float32(t.Float64At(i))
	}
	return out
}

var errDivZero = fmt.Errorf("integer division by zero")

func floorMod(x, y float64) float64 {
	m := math.Mod(x, y)
	if m != 0 && (m < 0) != (y < 0) {
		m += y
	}
	return m
}

func ipow(x, y int64) int64 {
	if y < 0 {
		return 0
	}
	r := int64(1)
	for ; y > 0; y-- {
		r *= x
	}
	return r
}

type arith struct {
	ff func(x, y float64) float64
	fi func(x, y int64) (int64, error)
}

var ariths = map[string]arith{
	"Add": {func(x, y float64) float64 { return x + y }, func(x, y int64) (int64, error) { return x + y, nil }},
	"Sub": {func(x, y float64) float64 { return x - y }, func(x, y int64) (int64, error) { return x - y, nil }},
	"Mul": {func(x, y float64) float64 { return x * y }, func(x, y int64) (int64, error) { return x * y, nil }},
	"Div": {func(x, y float64) float64 { return x / y }, func(x, y int64) (int64, error) {
		if y == 0 {
			return 0, errDivZero
		}
		return x / y, nil
	}},
	"Pow": {math.Pow, func(x, y int64) (int64, error) { return ipow(x, y), nil }},
	"Max": {func(x, y float64) float64 {
		if x != x || y != y {
			return math.NaN()
		}
		return math.Max(x, y)
	}, func(x, y int64) (int64, error) { return max(x, y), nil }},
	"Min": {func(x, y float64) float64 {
		if x != x || y != y {
			return math.NaN()
		}
		return math.Min(x, y)
	}, func(x, y int64) (int64, error) { return min(x, y), nil }},
}

func init() {
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Pow"} {
		ar := ariths[op]
		kind, fast := arithKinds[op]
		register("", op, func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
			if fast {
				if out, ok, err := arithF32(kind, in[0], in[1], c.threads); ok {
					return []*Tensor{out}, err
				}
			}
			out, err := binaryOp(in[0], in[1], c.threads, ar.ff, ar.fi)
			return []*Tensor{out}, err
		})
	}
	// Variadic ops fold pairwise with broadcasting.
	variadic := func(op string, ar arith, mean bool) {
		register("", op, func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
			acc := in[0]
			for _, t := range in[1:] {
				var err error
				if acc, err = binaryOp(acc, t, c.threads, ar.ff, ar.fi); err != nil {
					return nil, err
				}
			}
			if len(in) == 1 {
				acc = acc.Clone()
			}
			if mean && acc.F != nil {
				for i := range acc.F {
					acc.F[i] /= float32(len(in))
				}
			}
			return []*Tensor{acc}, nil
		})
	}
	variadic("Max", ariths["Max"], false)
	variadic("Min", ariths["Min"], false)
	variadic("Sum", ariths["Add"], false)
	variadic("Mean", ariths["Add"], true)

	register("", "Mod", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		fm := c.attrInt("fmod", 0) != 0
		ff := floorMod
		if fm {
			ff = math.Mod
		}
		out, err := binaryOp(in[0], in[1], c.threads, ff, func(x, y int64) (int64, error) {
			if y == 0 {
				return 0, errDivZero
			}
			m := x % y
			if !fm && m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return m, nil
		})
		return []*Tensor{out}, err
	})
	register("", "PRelu", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		out, err := binaryOp(in[0], in[1], c.threads, func(x, s float64) float64 {
			if x < 0 {
				return x * s
			}
			return x
		}, func(x, s int64) (int64, error) {
			if x < 0 {
				return x * s, nil
			}
			return x, nil
		})
		return []*Tensor{out}, err
	})

	compare := func(op string, f func(x, y float64) bool, fi func(x, y int64) bool) {
		register("", op, func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
			out, err := compareOp(in[0], in[1], f, fi)
			return []*Tensor{out}, err
		})
	}
	compare("Equal", func(x, y float64) bool { return x == y }, func(x, y int64) bool { return x == y })
	compare("Less", func(x, y float64) bool { return x < y }, func(x, y int64) bool { return x < y })
	compare("Greater", func(x, y float64) bool { return x > y }, func(x, y int64) bool { return x > y })
	compare("LessOrEqual", func(x, y float64) bool { return x <= y }, func(x, y int64) bool { return x <= y })
	compare("GreaterOrEqual", func(x, y float64) bool { return x >= y }, func(x, y int64) bool { return x >= y })

	logic := func(op string, f func(x, y bool) bool) {
		register("", op, func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
			a, b := in[0], in[1]
			if a.B == nil || b.B == nil {
				return nil, fmt.Errorf("%s needs bool inputs", op)
			}
			shape, err := broadcastShapes(a.Shape, b.Shape)
			if err != nil {
				return nil, err
			}
			out := NewTensor(graph.Bool, shape)
			walk2(shape, bcastStrides(a.Shape, shape), bcastStrides(b.Shape, shape), func(o, i, j int) {
				out.B[o] = f(a.B[i], b.B[j])
			})
			return []*Tensor{out}, nil
		})
	}
	logic("And", func(x, y bool) bool { return x && y })
	logic("Or", func(x, y bool) bool { return x || y })
	logic("Xor", func(x, y bool) bool { return x != y })
}

// compareOp compares with broadcasting; bool inputs compare as 0/1.
func compareOp(a, b *Tensor, f func(x, y float64) bool, fi func(x, y int64) bool) (*Tensor, error) {
	shape, err := broadcastShapes(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	out := NewTensor(graph.Bool, shape)
	sa, sb := bcastStrides(a.Shape, shape), bcastStrides(b.Shape, shape)
	if a.I != nil && b.I != nil {
		walk2(shape, sa, sb, func(o, i, j int) { out.B[o] = fi(a.I[i], b.I[j]) })
		return out, nil
	}
	walk2(shape, sa, sb, func(o, i, j int) { out.B[o] = f(a.Float64At(i), b.Float64At(j)) })
	return out, nil
}
