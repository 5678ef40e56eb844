package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// unaryF registers a float-only elementwise op; mk builds the scalar
// function from the node's attributes. Math runs in float64.
func unaryF(op string, mk func(c *opCtx) func(float64) float64) {
	register("", op, func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		if x.F == nil {
			return nil, fmt.Errorf("%s needs a float input, got %s", op, x.DType)
		}
		f := mk(c)
		out := NewTensor(x.DType, x.Shape)
		parallelFor(len(x.F), elemThreads(len(x.F), c.threads), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				out.F[i] = float32(f(float64(x.F[i])))
			}
		})
		return []*Tensor{out}, nil
	})
}

// elemThreads avoids goroutines for small elementwise work.
func elemThreads(n, threads int) int {
	if n < 1<<16 {
		return 1
	}
	return threads
}

func fixed(f func(float64) float64) func(c *opCtx) func(float64) float64 {
	return func(*opCtx) func(float64) float64 { return f }
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func init() {
	unaryF("Sqrt", fixed(math.Sqrt))
	unaryF("Reciprocal", fixed(func(x float64) float64 { return 1 / x }))
	unaryF("Exp", fixed(math.Exp))
	unaryF("Log", fixed(math.Log))
	unaryF("Floor", fixed(math.Floor))
	unaryF("Ceil", fixed(math.Ceil))
	unaryF("Round", fixed(math.RoundToEven))
	unaryF("Sin", fixed(math.Sin))
	unaryF("Cos", fixed(math.Cos))
	unaryF("Tan", fixed(math.Tan))
	unaryF("Tanh", fixed(math.Tanh))
	unaryF("Erf", fixed(math.Erf))
	unaryF("Sigmoid", fixed(sigmoid))
	unaryF("Softplus", fixed(softplus))
	unaryF("Softsign", fixed(func(x float64) float64 { return x / (1 + math.Abs(x)) }))
	unaryF("Mish", fixed(func(x float64) float64 { return x * math.Tanh(softplus(x)) }))
	unaryF("Elu", func(c *opCtx) func(float64) float64 {
		a := float64(c.attrFloat("alpha", 1))
		return func(x float64) float64 {
			if x < 0 {
				return a * (math.Exp(x) - 1)
			}
			return x
		}
	})
	unaryF("Selu", func(c *opCtx) func(float64) float64 {
		a := float64(c.attrFloat("alpha", 1.67326319217681884765625))
		g := float64(c.attrFloat("gamma", 1.05070102214813232421875))
		return func(x float64) float64 {
			if x <= 0 {
				return g * a * (math.Exp(x) - 1)
			}
			return g * x
		}
	})
	unaryF("LeakyRelu", func(c *opCtx) func(float64) float64 {
		a := float64(c.attrFloat("alpha", 0.01))
		return func(x float64) float64 {
			if x < 0 {
				return a * x
			}
			return x
		}
	})
	unaryF("HardSigmoid", func(c *opCtx) func(float64) float64 {
		a := float64(c.attrFloat("alpha", 0.2))
		b := float64(c.attrFloat("beta", 0.5))
		return func(x float64) float64 { return math.Max(0, math.Min(1, a*x+b)) }
	})
	unaryF("HardSwish", fixed(func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }))
	unaryF("Gelu", func(c *opCtx) func(float64) float64 {
		if c.attrString("approximate", "none") == "tanh" {
			return func(x float64) float64 {
				return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
			}
		}
		return func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	})
	unaryF("ThresholdedRelu", func(c *opCtx) func(float64) float64 {
		a := float64(c.attrFloat("alpha", 1))
		return func(x float64) float64 {
			if x > a {
				return x
			}
			return 0
		}
	})

	// Ops defined for ints as well as floats.
	unaryNum("Neg", func(x float64) float64 { return -x }, func(x int64) int64 { return -x })
	unaryNum("Abs", math.Abs, func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	})
	unaryNum("Relu", func(x float64) float64 { return math.Max(x, 0) }, func(x int64) int64 { return max(x, 0) })
	unaryNum("Sign", func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}, func(x int64) int64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	})

	register("", "Not", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		if x.B == nil {
			return nil, fmt.Errorf("Not needs bool, got %s", x.DType)
		}
		out := NewTensor(graph.Bool, x.Shape)
		for i, v := range x.B {
			out.B[i] = !v
		}
		return []*Tensor{out}, nil
	})
	register("", "IsNaN", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		out := NewTensor(graph.Bool, x.Shape)
		for i, v := range x.F {
			out.B[i] = v != v
		}
		return []*Tensor{out}, nil
	})
	register("", "IsInf", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		pos := c.attrInt("detect_positive", 1) != 0
		neg := c.attrInt("detect_negative", 1) != 0
		out := NewTensor(graph.Bool, x.Shape)
		for i, v := range x.F {
			out.B[i] = (pos && math.IsInf(float64(v), 1)) || (neg && math.IsInf(float64(v), -1))
		}
		return []*Tensor{out}, nil
	})
	register("", "Clip", opClip)
}

func unaryNum(op string, f func(float64) float64, fi func(int64) int64) {
	register("", op, func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		out := NewTensor(x.DType, x.Shape)
		switch {
		case x.F != nil:
			for i, v := range x.F {
				out.F[i] = float32(f(float64(v)))
			}
		case x.I != nil:
			for i, v := range x.I {
				out.I[i] = fi(v)
			}
		default:
			return nil, fmt.Errorf("%s does not take %s", op, x.DType)
		}
		return []*Tensor{out}, nil
	})
}

func opClip(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	lo, hi := math.Inf(-1), math.Inf(1)
	if c.opset < 11 {
		lo = float64(c.attrFloat("min", float32(math.Inf(-1))))
		hi = float64(c.attrFloat("max", float32(math.Inf(1))))
	} else {
		if len(in) > 1 && in[1] != nil {
			lo = in[1].Float64At(0)
		}
		if len(in) > 2 && in[2] != nil {
			hi = in[2].Float64At(0)
		}
	}
	out := NewTensor(x.DType, x.Shape)
	switch {
	case x.F != nil:
		for i, v := range x.F {
			// NaN propagates, like std::clamp over comparisons
			y := float64(v)
			if y < lo {
				y = lo
			}
			if y > hi {
				y = hi
			}
			out.F[i] = float32(y)
		}
	case x.I != nil:
		for i, v := range x.I {
			y := v
			if float64(y) < lo {
				y = int64(lo)
			}
			if float64(y) > hi {
				y = int64(hi)
			}
			out.I[i] = y
		}
	default:
		return nil, fmt.Errorf("Clip does not take %s", x.DType)
	}
	return []*Tensor{out}, nil
}
