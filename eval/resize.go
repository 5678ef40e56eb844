package eval

import (
	"fmt"
	"math"
)

// resizeParams is what Resize and Upsample share.
type resizeParams struct {
	mode, coord, nearest string
	cubicA               float64
	excludeOutside       bool
}

// srcCoord maps an output coordinate to the input axis.
func srcCoord(coord string, x float64, scale float64, outLen, inLen int) float64 {
	switch coord {
	case "asymmetric":
		return x / scale
	case "align_corners":
		if outLen == 1 {
			return 0
		}
		return x * float64(inLen-1) / float64(outLen-1)
	case "pytorch_half_pixel":
		if outLen == 1 {
			return 0
		}
		return (x+0.5)/scale - 0.5
	case "tf_half_pixel_for_nn":
		return (x + 0.5) / scale
	}
	return (x+0.5)/scale - 0.5 // half_pixel
}

func nearestIndex(mode string, x float64, inLen int) int {
	var i float64
	switch mode {
	case "floor":
		i = math.Floor(x)
	case "ceil":
		i = math.Ceil(x)
	case "round_prefer_ceil":
		i = math.Floor(x + 0.5)
	default: // round_prefer_floor
		if x-math.Floor(x) == 0.5 {
			i = math.Floor(x)
		} else {
			i = math.Round(x)
		}
	}
	return int(min(max(i, 0), float64(inLen-1)))
}

// cubicWeight is the Keys cubic convolution kernel with parameter a.
func cubicWeight(x, a float64) float64 {
	x = math.Abs(x)
	switch {
	case x <= 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return ((a*x-5*a)*x+8*a)*x - 4*a
	}
	return 0
}

// resizeAxis resamples one axis; nearest, linear and cubic are separable,
// so N-D resizing is a sequence of these.
func resizeAxis(x *Tensor, ax, outLen int, scale float64, p resizeParams) *Tensor {
	inLen := x.Shape[ax]
	outer, inner := numel(x.Shape[:ax]), numel(x.Shape[ax+1:])
	shape := append([]int{}, x.Shape...)
	shape[ax] = outLen
	out := NewTensor(x.DType, shape)
	type tap struct {
		idx []int
		w   []float64
	}
	taps := make([]tap, outLen)
	for o := range taps {
		s := srcCoord(p.coord, float64(o), scale, outLen, inLen)
		switch p.mode {
		case "nearest":
			taps[o] = tap{[]int{nearestIndex(p.nearest, s, inLen)}, []float64{1}}
		case "linear":
			s = min(max(s, 0), float64(inLen-1))
			i0 := int(math.Floor(s))
			i1 := min(i0+1, inLen-1)
			t := s - float64(i0)
			taps[o] = tap{[]int{i0, i1}, []float64{1 - t, t}}
		default: // cubic: four taps around floor(s), edge-clamped
			i0 := int(math.Floor(s))
			t := s - float64(i0)
			var tp tap
			sum := 0.0
			for k := -1; k <= 2; k++ {
				w := cubicWeight(float64(k)-t, p.cubicA)
				i := i0 + k
				if i < 0 || i >= inLen {
					if p.excludeOutside {
						continue
					}
					i = min(max(i, 0), inLen-1)
				}
				tp.idx = append(tp.idx, i)
				tp.w = append(tp.w, w)
				sum += w
			}
			if p.excludeOutside && sum != 0 {
				for k := range tp.w {
					tp.w[k] /= sum
				}
			}
			taps[o] = tp
		}
	}
	for a := 0; a < outer; a++ {
		for o, t := range taps {
			d := (a*outLen + o) * inner
			for i := 0; i < inner; i++ {
				acc := 0.0
				for k, src := range t.idx {
					acc += t.w[k] * float64(x.F[(a*inLen+src)*inner+i])
				}
				out.F[d+i] = float32(acc)
			}
		}
	}
	return out
}

func resize(x *Tensor, scales []float64, sizes []int, p resizeParams) (*Tensor, error) {
	if x.F == nil {
		return nil, fmt.Errorf("resize of %s", x.DType)
	}
	if p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic" {
		return nil, fmt.Errorf("resize mode %q is not supported", p.mode)
	}
	r := len(x.Shape)
	if sizes == nil {
		if len(scales) != r {
			return nil, fmt.Errorf("resize: %d scales for rank %d", len(scales), r)
		}
		sizes = make([]int, r)
		for i, s := range scales {
			sizes[i] = int(math.Floor(float64(x.Shape[i]) * s))
		}
	} else {
		if len(sizes) != r {
			return nil, fmt.Errorf("resize: %d sizes for rank %d", len(sizes), r)
		}
		scales = make([]float64, r)
		for i := range sizes {
			scales[i] = float64(sizes[i]) / float64(x.Shape[i])
		}
	}
	for ax := 0; ax < r; ax++ {
		if sizes[ax] == x.Shape[ax] && scales[ax] == 1 {
			continue
		}
		x = resizeAxis(x, ax, sizes[ax], scales[ax], p)
	}
	return x, nil
}

func opResize(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	p := resizeParams{
		mode:    c.attrString("mode", "nearest"),
		coord:   c.attrString("coordinate_transformation_mode", "half_pixel"),
		nearest: c.attrString("nearest_mode", "round_prefer_floor"),
		cubicA:  float64(c.attrFloat("cubic_coeff_a", -0.75)),

		excludeOutside: c.attrInt("exclude_outside", 0) != 0,
	}
	if c.attrInt("antialias", 0) != 0 {
		return nil, fmt.Errorf("Resize antialias is not supported")
	}
	var scales []float64
	var sizes []int
	if c.opset < 11 {
		p.coord = "asymmetric"
		p.nearest = "floor"
		scales = in[1].Float64s()
	} else {
		if s := opt(in, 2); s != nil && s.Numel() > 0 {
			scales = s.Float64s()
		}
		if s := opt(in, 3); s != nil && s.Numel() > 0 {
			sizes = toInts(s.ints())
		}
		if p.coord == "tf_crop_and_resize" {
			return nil, fmt.Errorf("coordinate_transformation_mode tf_crop_and_resize is not supported")
		}
	}
	if axes := c.attrInts("axes"); axes != nil {
		// scales/sizes given for a subset of axes
		r := len(x.Shape)
		fs := make([]float64, r)
		fz := make([]int, r)
		for i := range fs {
			fs[i], fz[i] = 1, x.Shape[i]
		}
		for i, a := range axes {
			ax, err := normAxis(a, r)
			if err != nil {
				return nil, err
			}
			if scales != nil {
				fs[ax] = scales[i]
			}
			if sizes != nil {
				fz[ax] = sizes[i]
			}
		}
		if scales != nil {
			scales = fs
		}
		if sizes != nil {
			sizes = fz
		}
	}
	if c.attrString("keep_aspect_ratio_policy", "stretch") != "stretch" {
		return nil, fmt.Errorf("keep_aspect_ratio_policy other than stretch is not supported")
	}
	r, err := resize(x, scales, sizes, p)
	return []*Tensor{r}, err
}

func opUpsample(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	p := resizeParams{mode: c.attrString("mode", "nearest"), coord: "asymmetric", nearest: "floor"}
	var scales []float64
	if a := c.node.Attr("scales"); a != nil {
		for _, f := range a.Floats {
			scales = append(scales, float64(f))
		}
	} else if len(in) > 1 && in[1] != nil {
		scales = in[1].Float64s()
	}
	if p.mode == "bilinear" {
		p.mode = "linear"
	}
	r, err := resize(in[0], scales, nil, p)
	return []*Tensor{r}, err
}

func init() {
	register("", "Resize", opResize)
	register("", "Upsample", opUpsample)
}
