package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/attnopt/attnopt/graph"
)

// softmaxRows normalizes along an axis of length d laid out with stride
// inner, for outer×inner independent rows; log selects LogSoftmax. It
// computes in float32 with expf (exp32.go), as ONNX Runtime's CPU kernel
// does; only the row sum accumulates in float64, so a long row's result
// does not depend on its length.
func softmaxRows(x []float32, outer, d, inner int, log bool, threads int) []float32 {
	out := make([]float32, len(x))
	parallelFor(outer*inner, elemThreads(len(x), threads), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o, i := r/inner, r%inner
			base := o*d*inner + i
			mx := float32(math.Inf(-1))
			for j := 0; j < d; j++ {
				if v := x[base+j*inner]; v > mx || v != v {
					mx = v
				}
			}
			var sum float64
			if inner == 1 {
				sum = expShift(out[base:base+d], x[base:base+d], mx)
			} else {
				for j := 0; j < d; j++ {
					e := expf(x[base+j*inner] - mx)
					out[base+j*inner] = e
					sum += float64(e)
				}
			}
			if log {
				ls := float32(math.Log(sum))
				for j := 0; j < d; j++ {
					out[base+j*inner] = x[base+j*inner] - mx - ls
				}
				continue
			}
			inv := float32(1 / sum)
			for j := 0; j < d; j++ {
				out[base+j*inner] *= inv
			}
		}
	})
	return out
}

func softmaxOp(log bool) kernel {
	return func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		if err := needFloat(x); err != nil {
			return nil, err
		}
		r := len(x.Shape)
		def := int64(-1)
		if c.opset < 13 {
			def = 1
		}
		ax, err := normAxis(c.attrInt("axis", def), max(r, 1))
		if err != nil {
			return nil, err
		}
		var outer, d, inner int
		if c.opset < 13 {
			// Old semantics: coerce to 2-D at axis and normalize each row.
			outer, d, inner = numel(x.Shape[:ax]), numel(x.Shape[ax:]), 1
		} else {
			outer, d, inner = numel(x.Shape[:ax]), x.Shape[ax], numel(x.Shape[ax+1:])
		}
		return []*Tensor{{DType: x.DType, Shape: append([]int{}, x.Shape...), F: softmaxRows(x.F, outer, d, inner, log, c.threads)}}, nil
	}
}

type reducer struct {
	init   float64
	acc    func(a, x float64) float64
	finish func(a float64, n int) float64
}

var reducers = map[string]reducer{
	"ReduceSum":       {0, func(a, x float64) float64 { return a + x }, nil},
	"ReduceMean":      {0, func(a, x float64) float64 { return a + x }, func(a float64, n int) float64 { return a / float64(n) }},
	"ReduceMax":       {math.Inf(-1), maxNaN, nil},
	"ReduceMin":       {math.Inf(1), func(a, x float64) float64 { return -maxNaN(-a, -x) }, nil},
	"ReduceProd":      {1, func(a, x float64) float64 { return a * x }, nil},
	"ReduceL1":        {0, func(a, x float64) float64 { return a + math.Abs(x) }, nil},
	"ReduceL2":        {0, func(a, x float64) float64 { return a + x*x }, func(a float64, _ int) float64 { return math.Sqrt(a) }},
	"ReduceSumSquare": {0, func(a, x float64) float64 { return a + x*x }, nil},
	"ReduceLogSumExp": {0, func(a, x float64) float64 { return a + math.Exp(x) }, func(a float64, _ int) float64 { return math.Log(a) }},
}

func maxNaN(a, x float64) float64 {
	if a != a || x != x {
		return math.NaN()
	}
	return math.Max(a, x)
}

// reduceShape resolves reduced axes and the output shape.
func reduceShape(shape []int, axes []int64, keep bool) (red []bool, out []int, err error) {
	red = make([]bool, len(shape))
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	for _, a := range axes {
		ax, err := normAxis(a, len(shape))
		if err != nil {
			return nil, nil, err
		}
		red[ax] = true
	}
	for i, d := range shape {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return red, out, nil
}

func reduceOp(op string) kernel {
	rd := reducers[op]
	return func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		since := int64(18)
		if op == "ReduceSum" {
			since = 13
		}
		axes, _ := axesArg(c, in, 1, since)
		if len(axes) == 0 && c.attrInt("noop_with_empty_axes", 0) != 0 {
			return []*Tensor{x}, nil
		}
		keep := c.attrInt("keepdims", 1) != 0
		red, shape, err := reduceShape(x.Shape, axes, keep)
		if err != nil {
			return nil, err
		}
		// strides into the output that skip reduced axes
		kept := make([]int, len(x.Shape))
		os := 1
		for i := len(x.Shape) - 1; i >= 0; i-- {
			if !red[i] {
				kept[i] = os
				os *= x.Shape[i]
			}
		}
		n := numel(shape)
		acc := make([]float64, n)
		for i := range acc {
			acc[i] = rd.init
		}
		walk2(x.Shape, contiguousStrides(x.Shape), kept, func(_, i, o int) {
			acc[o] = rd.acc(acc[o], x.Float64At(i))
		})
		cnt := 1
		if n > 0 {
			cnt = x.Numel() / n
		}
		out := NewTensor(x.DType, shape)
		for i, a := range acc {
			if rd.finish != nil {
				a = rd.finish(a, cnt)
			}
			if out.F != nil {
				out.F[i] = float32(a)
			} else if out.I != nil {
				out.I[i] = int64(a)
			}
		}
		return []*Tensor{out}, nil
	}
}

func argOp(largest bool) kernel {
	return func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		x := in[0]
		ax, err := normAxis(c.attrInt("axis", 0), len(x.Shape))
		if err != nil {
			return nil, err
		}
		last := c.attrInt("select_last_index", 0) != 0
		d := x.Shape[ax]
		outer, inner := numel(x.Shape[:ax]), numel(x.Shape[ax+1:])
		shape := append([]int{}, x.Shape...)
		shape[ax] = 1
		if c.attrInt("keepdims", 1) == 0 {
			shape = append(shape[:ax:ax], x.Shape[ax+1:]...)
		}
		out := NewTensor(graph.Int64, shape)
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				best, bi := 0.0, 0
				for j := 0; j < d; j++ {
					v := x.Float64At((o*d+j)*inner + i)
					better := v > best
					if !largest {
						better = v < best
					}
					if j == 0 || better || (last && v == best) {
						best, bi = v, j
					}
				}
				out.I[o*inner+i] = int64(bi)
			}
		}
		return []*Tensor{out}, nil
	}
}

func opTopK(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	var k int
	if c.opset < 10 {
		k = int(c.attrInt("k", 1))
	} else {
		k = int(in[1].ints()[0])
	}
	ax, err := normAxis(c.attrInt("axis", -1), len(x.Shape))
	if err != nil {
		return nil, err
	}
	largest := c.attrInt("largest", 1) != 0
	d := x.Shape[ax]
	outer, inner := numel(x.Shape[:ax]), numel(x.Shape[ax+1:])
	shape := append([]int{}, x.Shape...)
	shape[ax] = k
	vals := NewTensor(x.DType, shape)
	idx := NewTensor(graph.Int64, shape)
	row := make([]float64, d)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			for j := 0; j < d; j++ {
				row[j] = x.Float64At((o*d+j)*inner + i)
			}
			order := argsortDesc(row, largest)
			for j := 0; j < k; j++ {
				p := (o*k+j)*inner + i
				src := (o*d+order[j])*inner + i
				idx.I[p] = int64(order[j])
				if vals.F != nil {
					vals.F[p] = x.F[src]
				} else {
					vals.I[p] = x.I[src]
				}
			}
		}
	}
	return []*Tensor{vals, idx}, nil
}

// normalizeGroups normalizes each of groups contiguous blocks of size n
// (mean/variance in float64) and returns (x-mean)*invstd plus per-block
// mean and inverse std.
func normalizeGroups(x []float32, groups, n int, eps float64, threads int) ([]float32, []float64, []float64) {
	out := make([]float32, len(x))
	means := make([]float64, groups)
	inv := make([]float64, groups)
	parallelFor(groups, elemThreads(len(x), threads), func(lo, hi int) {
		for g := lo; g < hi; g++ {
			blk := x[g*n : (g+1)*n]
			s := 0.0
			for _, v := range blk {
				s += float64(v)
			}
			mean := s / float64(n)
			v2 := 0.0
			for _, v := range blk {
				d := float64(v) - mean
				v2 += d * d
			}
			is := 1 / math.Sqrt(v2/float64(n)+eps)
			means[g], inv[g] = mean, is
			for i, v := range blk {
				out[g*n+i] = float32((float64(v) - mean) * is)
			}
		}
	})
	return out, means, inv
}

// normGroups reads the axis and epsilon of LayerNormalization and
// RMSNormalization: x is normalised in groups of n trailing elements.
func normGroups(c *opCtx, in []*Tensor) (ax, groups, n int, eps float64, err error) {
	if err = needFloat(in[0], opt(in, 1), opt(in, 2)); err != nil {
		return
	}
	x := in[0]
	if ax, err = normAxis(c.attrInt("axis", -1), len(x.Shape)); err != nil {
		return
	}
	return ax, numel(x.Shape[:ax]), numel(x.Shape[ax:]), float64(c.attrFloat("epsilon", 1e-5)), nil
}

func opLayerNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	ax, groups, n, eps, err := normGroups(c, in)
	if err != nil {
		return nil, err
	}
	x := in[0]
	y, means, inv := normalizeGroups(x.F, groups, n, eps, c.threads)
	out := &Tensor{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}
	// scale and bias broadcast over the normalized trailing dims
	scale := in[1]
	if scale != nil {
		sc := expandTo(scale, x.Shape[ax:]).F
		for i := range y {
			y[i] *= sc[i%n]
		}
	}
	if len(in) > 2 && in[2] != nil {
		bs := expandTo(in[2], x.Shape[ax:]).F
		for i := range y {
			y[i] += bs[i%n]
		}
	}
	statShape := append([]int{}, x.Shape...)
	for i := ax; i < len(statShape); i++ {
		statShape[i] = 1
	}
	sdt := graph.DType(c.attrInt("stash_type", 1))
	mt, it := NewTensor(sdt, statShape), NewTensor(sdt, statShape)
	for g := range means {
		mt.F[g], it.F[g] = float32(means[g]), float32(inv[g])
	}
	return []*Tensor{out, mt, it}, nil
}

// channelAffine applies per-channel scale and bias over (N, C, spatial...).
func channelAffine(y []float32, shape []int, scale, bias []float32) {
	C := shape[1]
	sp := numel(shape[2:])
	for i := range y {
		ch := (i / sp) % C
		if scale != nil {
			y[i] *= scale[ch]
		}
		if bias != nil {
			y[i] += bias[ch]
		}
	}
}

func opInstanceNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in[0], in[1], in[2]); err != nil {
		return nil, err
	}
	x := in[0]
	eps := float64(c.attrFloat("epsilon", 1e-5))
	sp := numel(x.Shape[2:])
	y, _, _ := normalizeGroups(x.F, x.Shape[0]*x.Shape[1], sp, eps, c.threads)
	channelAffine(y, x.Shape, in[1].F, in[2].F)
	return []*Tensor{{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}}, nil
}

func opGroupNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in[0], in[1], in[2]); err != nil {
		return nil, err
	}
	x := in[0]
	eps := float64(c.attrFloat("epsilon", 1e-5))
	G := int(c.attrInt("num_groups", 1))
	N, C := x.Shape[0], x.Shape[1]
	if C%G != 0 {
		return nil, fmt.Errorf("GroupNormalization: %d channels, %d groups", C, G)
	}
	sp := numel(x.Shape[2:])
	y, _, _ := normalizeGroups(x.F, N*G, C/G*sp, eps, c.threads)
	scale, bias := in[1].F, in[2].F
	if len(scale) == G && G != C {
		// opset 18 form: one scale and bias per group
		s2, b2 := make([]float32, C), make([]float32, C)
		for ch := range s2 {
			s2[ch], b2[ch] = scale[ch/(C/G)], bias[ch/(C/G)]
		}
		scale, bias = s2, b2
	}
	channelAffine(y, x.Shape, scale, bias)
	return []*Tensor{{DType: x.DType, Shape: append([]int{}, x.Shape...), F: y}}, nil
}

func opBatchNorm(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in...); err != nil {
		return nil, err
	}
	x := in[0]
	eps := float64(c.attrFloat("epsilon", 1e-5))
	scale, bias, mean, vr := in[1].F, in[2].F, in[3].F, in[4].F
	C := x.Shape[1]
	sp := numel(x.Shape[2:])
	out := NewTensor(x.DType, x.Shape)
	for i, v := range x.F {
		ch := (i / sp) % C
		out.F[i] = float32((float64(v)-float64(mean[ch]))/math.Sqrt(float64(vr[ch])+eps)*float64(scale[ch]) + float64(bias[ch]))
	}
	return []*Tensor{out}, nil
}

func init() {
	register("", "Softmax", softmaxOp(false))
	register("", "LogSoftmax", softmaxOp(true))
	for op := range reducers {
		register("", op, reduceOp(op))
	}
	register("", "ArgMax", argOp(true))
	register("", "ArgMin", argOp(false))
	register("", "TopK", opTopK)
	register("", "RandomUniformLike", opRandomUniformLike)
	register("", "LayerNormalization", opLayerNorm)
	register("", "InstanceNormalization", opInstanceNorm)
	register("", "GroupNormalization", opGroupNorm)
	register("", "BatchNormalization", opBatchNorm)
}

// opRandomUniformLike draws from a generator seeded by the op's seed (0
// without one), so a run is reproducible; it is not ONNX Runtime's
// generator, so a graph whose outputs depend on the draw (Informer's key
// sample when it keeps fewer queries than it has) differs between runtimes.
func opRandomUniformLike(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	dt := in[0].DType
	if c.hasAttr("dtype") {
		dt = graph.DType(c.attrInt("dtype", 0))
	}
	out := NewTensor(dt, in[0].Shape)
	if out.F == nil {
		return nil, fmt.Errorf("RandomUniformLike of type %s", dt)
	}
	lo, hi := float64(c.attrFloat("low", 0)), float64(c.attrFloat("high", 1))
	seed := math.Float32bits(c.attrFloat("seed", 0))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	for i := range out.F {
		out.F[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return []*Tensor{out}, nil
}
