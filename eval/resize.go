package eval

import (
	"fmt"
	"math"
)

// resizeParams is what Resize and Upsample share.
type resizeParams struct {
	mode, coord, nearest string
	cubicA               float64
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

// resizeAxis resamples one axis; nearest and (multi)linear are separable,
// so N-D resizing is a sequence of these.
func resizeAxis(x *Tensor, ax, outLen int, scale float64, p resizeParams) *Tensor {
	inLen := x.Shape[ax]
	outer, inner := numel(x.Shape[:ax]), numel(x.Shape[ax+1:])
	shape := append([]int{}, x.Shape...)
	shape[ax] = outLen
	out := NewTensor(x.DType, shape)
	type tap struct {
		i0, i1 int
		w      float64
	}
	taps := make([]tap, outLen)
	for o := range taps {
		s := srcCoord(p.coord, float64(o), scale, outLen, inLen)
		if p.mode == "nearest" {
			i := nearestIndex(p.nearest, s, inLen)
			taps[o] = tap{i, i, 0}
			continue
		}
		s = min(max(s, 0), float64(inLen-1))
		i0 := int(math.Floor(s))
		i1 := min(i0+1, inLen-1)
		taps[o] = tap{i0, i1, s - float64(i0)}
	}
	for a := 0; a < outer; a++ {
		for o, t := range taps {
			d := (a*outLen + o) * inner
			s0 := (a*inLen + t.i0) * inner
			s1 := (a*inLen + t.i1) * inner
			for i := 0; i < inner; i++ {
				v0 := float64(x.F[s0+i])
				v1 := float64(x.F[s1+i])
				out.F[d+i] = float32(v0 + t.w*(v1-v0))
			}
		}
	}
	return out
}

func resize(x *Tensor, scales []float64, sizes []int, p resizeParams) (*Tensor, error) {
	if x.F == nil {
		return nil, fmt.Errorf("resize of %s", x.DType)
	}
	if p.mode != "nearest" && p.mode != "linear" {
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
