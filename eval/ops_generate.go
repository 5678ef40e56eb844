package eval

import (
	"fmt"
	"math"
)

// Ops that generate or fill data: Range, Pad, Trilu, CumSum.

func opRange(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	start, limit, delta := in[0], in[1], in[2]
	if start.F != nil {
		s, l, d := float64(start.F[0]), float64(limit.F[0]), float64(delta.F[0])
		n := int(max(math.Ceil((l-s)/d), 0))
		out := NewTensor(start.DType, []int{n})
		for i := range out.F {
			out.F[i] = float32(s + float64(i)*d)
		}
		return []*Tensor{out}, nil
	}
	s, l, d := start.I[0], limit.I[0], delta.I[0]
	if d == 0 {
		return nil, fmt.Errorf("range delta 0")
	}
	n := int64(0)
	if d > 0 && l > s {
		n = (l - s + d - 1) / d
	} else if d < 0 && s > l {
		n = (s - l - d - 1) / (-d)
	}
	out := NewTensor(start.DType, []int{int(n)})
	for i := range out.I {
		out.I[i] = s + int64(i)*d
	}
	return []*Tensor{out}, nil
}

func opPad(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	r := len(x.Shape)
	mode := c.attrString("mode", "constant")
	var pads []int64
	cval := 0.0
	if c.opset < 11 {
		pads = c.attrInts("pads")
		cval = float64(c.attrFloat("value", 0))
	} else {
		pads = in[1].ints()
		if len(in) > 2 && in[2] != nil && in[2].Numel() > 0 {
			cval = in[2].Float64At(0)
		}
	}
	full := make([]int, 2*r)
	if len(in) > 3 && in[3] != nil {
		axes := in[3].ints()
		for i, a := range axes {
			ax, err := normAxis(a, r)
			if err != nil {
				return nil, err
			}
			full[ax] = int(pads[i])
			full[ax+r] = int(pads[i+len(axes)])
		}
	} else {
		if len(pads) != 2*r {
			return nil, fmt.Errorf("pads %v for rank %d", pads, r)
		}
		for i, p := range pads {
			full[i] = int(p)
		}
	}
	shape := make([]int, r)
	for a := range shape {
		shape[a] = x.Shape[a] + full[a] + full[a+r]
	}
	out := NewTensor(x.DType, shape)
	cs := contiguousStrides(x.Shape)
	var ferr error
	forIndex(shape, func(k int, ix []int) {
		off := 0
		for a, v := range ix {
			s := v - full[a]
			d := x.Shape[a]
			if s < 0 || s >= d {
				switch mode {
				case "constant":
					off = -1
				case "edge":
					s = min(max(s, 0), d-1)
				case "reflect":
					if d == 1 {
						s = 0
					} else {
						p := 2 * (d - 1)
						s = ((s % p) + p) % p
						if s >= d {
							s = p - s
						}
					}
				case "wrap":
					s = ((s % d) + d) % d
				default:
					ferr = fmt.Errorf("pad mode %q", mode)
					off = -1
				}
			}
			if off < 0 {
				break
			}
			off += s * cs[a]
		}
		switch {
		case off < 0:
			switch {
			case out.F != nil:
				out.F[k] = float32(cval)
			case out.I != nil:
				out.I[k] = int64(cval)
			default:
				out.B[k] = cval != 0
			}
		case out.F != nil:
			out.F[k] = x.F[off]
		case out.I != nil:
			out.I[k] = x.I[off]
		default:
			out.B[k] = x.B[off]
		}
	})
	return []*Tensor{out}, ferr
}

func opTrilu(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0].Clone()
	k := int64(0)
	if len(in) > 1 && in[1] != nil {
		k = in[1].ints()[0]
	}
	upper := c.attrInt("upper", 1) != 0
	r := len(x.Shape)
	rows, cols := x.Shape[r-2], x.Shape[r-1]
	for b := 0; b < numel(x.Shape[:r-2]); b++ {
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				keep := int64(j-i) >= k
				if !upper {
					keep = int64(j-i) <= k
				}
				if keep {
					continue
				}
				o := (b*rows+i)*cols + j
				switch {
				case x.F != nil:
					x.F[o] = 0
				case x.I != nil:
					x.I[o] = 0
				default:
					x.B[o] = false
				}
			}
		}
	}
	return []*Tensor{x}, nil
}

func opCumSum(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x := in[0]
	ax, err := normAxis(in[1].ints()[0], len(x.Shape))
	if err != nil {
		return nil, err
	}
	excl := c.attrInt("exclusive", 0) != 0
	rev := c.attrInt("reverse", 0) != 0
	out := NewTensor(x.DType, x.Shape)
	d := x.Shape[ax]
	outer, inner := numel(x.Shape[:ax]), numel(x.Shape[ax+1:])
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			var accF float64
			var accI int64
			for s := 0; s < d; s++ {
				j := s
				if rev {
					j = d - 1 - s
				}
				p := (o*d+j)*inner + i
				if x.F != nil {
					if excl {
						out.F[p] = float32(accF)
						accF += float64(x.F[p])
					} else {
						accF += float64(x.F[p])
						out.F[p] = float32(accF)
					}
				} else {
					if excl {
						out.I[p] = accI
						accI += x.I[p]
					} else {
						accI += x.I[p]
						out.I[p] = accI
					}
				}
			}
		}
	}
	return []*Tensor{out}, nil
}
