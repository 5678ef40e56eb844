package eval

import (
	"fmt"
	"math"
)

// convGeom is the spatial geometry shared by Conv, ConvTranspose and pools.
type convGeom struct {
	in, k, out, stride, dil, padB, padE []int
}

func intsOr(xs []int64, n, def int) []int {
	if xs == nil {
		out := make([]int, n)
		for i := range out {
			out[i] = def
		}
		return out
	}
	return toInts(xs)
}

// geometry resolves pads (explicit or auto_pad) and output sizes.
func geometry(c *opCtx, in, k []int, ceil bool) (*convGeom, error) {
	n := len(in)
	g := &convGeom{in: in, k: k, stride: intsOr(c.attrInts("strides"), n, 1), dil: intsOr(c.attrInts("dilations"), n, 1)}
	pads := intsOr(c.attrInts("pads"), 2*n, 0)
	if len(g.stride) != n || len(g.dil) != n || len(pads) != 2*n {
		return nil, fmt.Errorf("strides/dilations/pads do not match %d spatial dims", n)
	}
	g.padB, g.padE = pads[:n], pads[n:]
	g.out = make([]int, n)
	auto := c.attrString("auto_pad", "NOTSET")
	for d := 0; d < n; d++ {
		ek := g.dil[d]*(k[d]-1) + 1
		switch auto {
		case "SAME_UPPER", "SAME_LOWER":
			g.out[d] = (in[d] + g.stride[d] - 1) / g.stride[d]
			total := max(0, (g.out[d]-1)*g.stride[d]+ek-in[d])
			if auto == "SAME_UPPER" {
				g.padB[d], g.padE[d] = total/2, total-total/2
			} else {
				g.padB[d], g.padE[d] = total-total/2, total/2
			}
			continue
		case "VALID":
			g.padB[d], g.padE[d] = 0, 0
		}
		span := in[d] + g.padB[d] + g.padE[d] - ek
		if ceil {
			g.out[d] = (span+g.stride[d]-1)/g.stride[d] + 1
			// the last window must start inside the input or left pad
			if (g.out[d]-1)*g.stride[d] >= in[d]+g.padB[d] {
				g.out[d]--
			}
		} else {
			g.out[d] = span/g.stride[d] + 1
		}
		if g.out[d] <= 0 {
			return nil, fmt.Errorf("kernel %v larger than padded input %v", k, in)
		}
	}
	return g, nil
}

// im2col lays out, for one image of C channels, rows (c, kernel offset) ×
// columns (output position), zero where the window hits padding. Rows are
// filled in parallel; along the last spatial axis the in-bounds span of
// output positions is computed once per run, so the copy loop has no
// per-element bounds tests.
func im2col(x []float32, C int, g *convGeom, cols []float32, threads int) {
	n := len(g.in)
	outSp, kSp, inSp := numel(g.out), numel(g.k), numel(g.in)
	inStr := contiguousStrides(g.in)
	last := n - 1
	ol, il := g.out[last], g.in[last]
	sl, pl := g.stride[last], g.padB[last]
	parallelFor(C*kSp, elemThreads(len(cols), threads), func(lo, hi int) {
		kc := make([]int, n)
		oc := make([]int, n) // output index over the leading axes
		for row := lo; row < hi; row++ {
			ch, ki := row/kSp, row%kSp
			r := ki
			for d := n - 1; d >= 0; d-- {
				kc[d] = (r % g.k[d]) * g.dil[d]
				r /= g.k[d]
			}
			dst := cols[row*outSp : (row+1)*outSp]
			src := x[ch*inSp : (ch+1)*inSp]
			// last-axis positions ox with 0 <= ox*sl - pl + kc < il
			shift := kc[last] - pl
			x0 := 0
			if shift < 0 {
				x0 = min(ol, (-shift+sl-1)/sl)
			}
			x1 := max(x0, min(ol, ceilDiv(il-shift, sl)))
			clear(oc)
			for run := 0; run < outSp; run += ol {
				seg := dst[run : run+ol]
				base, ok := 0, true
				for d := 0; d < last; d++ {
					ic := oc[d]*g.stride[d] - g.padB[d] + kc[d]
					if ic < 0 || ic >= g.in[d] {
						ok = false
						break
					}
					base += ic * inStr[d]
				}
				if !ok {
					clear(seg)
				} else {
					zero(seg[:x0])
					zero(seg[x1:])
					if x1 > x0 {
						first := base + x0*sl + shift
						if sl == 1 {
							copy(seg[x0:x1], src[first:first+x1-x0])
						} else {
							in := src[first : first+(x1-x0-1)*sl+1]
							out := seg[x0:x1]
							for i := range out {
								out[i] = in[i*sl]
							}
						}
					}
				}
				for d := last - 1; d >= 0; d-- { // next run
					oc[d]++
					if oc[d] < g.out[d] {
						break
					}
					oc[d] = 0
				}
			}
		}
	})
}

// zero clears a short span inline (the padding at a row's ends), where a
// memclr call would cost more than the stores.
func zero(s []float32) {
	for i := 0; i < len(s); i++ {
		s[i] = 0
	}
}

// ceilDiv is ⌈a/b⌉ for b > 0, a of either sign.
func ceilDiv(a, b int) int {
	if a <= 0 {
		return -(-a / b)
	}
	return (a + b - 1) / b
}

// pointwise reports a 1×1 convolution that reads every input position once
// in order, whose im2col matrix is the input itself.
func (g *convGeom) pointwise() bool {
	for d := range g.k {
		if g.k[d] != 1 || g.stride[d] != 1 || g.padB[d] != 0 || g.padE[d] != 0 || g.out[d] != g.in[d] {
			return false
		}
	}
	return true
}

func opConv(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in[0], in[1], opt(in, 2)); err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	if len(x.Shape) < 3 {
		return nil, fmt.Errorf("Conv input of rank %d", len(x.Shape))
	}
	N, C := x.Shape[0], x.Shape[1]
	M := w.Shape[0]
	groups := int(c.attrInt("group", 1))
	if C%groups != 0 || M%groups != 0 || w.Shape[1] != C/groups {
		return nil, fmt.Errorf("Conv: input %v, weight %v, group %d", x.Shape, w.Shape, groups)
	}
	g, err := geometry(c, x.Shape[2:], w.Shape[2:], false)
	if err != nil {
		return nil, err
	}
	cg, mg := C/groups, M/groups
	kSp, inSp, outSp := numel(g.k), numel(g.in), numel(g.out)
	rows := cg * kSp
	out := NewTensor(x.DType, append([]int{N, M}, g.out...))
	var cols []float32
	if !g.pointwise() {
		buf := scratch.get(rows * outSp)
		defer scratch.put(buf)
		cols = *buf
	}
	for n := 0; n < N; n++ {
		for gi := 0; gi < groups; gi++ {
			xg := x.F[(n*C+gi*cg)*inSp : (n*C+(gi+1)*cg)*inSp]
			if cols != nil {
				im2col(xg, cg, g, cols, c.threads)
				xg = cols
			}
			wg := w.F[gi*mg*rows : (gi+1)*mg*rows]
			gemmBatch(wg, xg, out.F[(n*M+gi*mg)*outSp:], []int{0}, []int{0}, mg, rows, outSp, c.threads)
		}
	}
	if len(in) > 2 && in[2] != nil {
		bias := in[2].F
		for i := range out.F {
			out.F[i] += bias[(i/outSp)%M]
		}
	}
	return []*Tensor{out}, nil
}

// opConvTranspose computes W_gᵀ·X_g as columns and scatters them back
// (col2im): the adjoint of Conv.
func opConvTranspose(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	if err := needFloat(in[0], in[1], opt(in, 2)); err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	N, C := x.Shape[0], x.Shape[1]
	groups := int(c.attrInt("group", 1))
	mg := w.Shape[1]
	M := mg * groups
	cg := C / groups
	sp := x.Shape[2:]
	n := len(sp)
	k := w.Shape[2:]
	stride := intsOr(c.attrInts("strides"), n, 1)
	dil := intsOr(c.attrInts("dilations"), n, 1)
	outPad := intsOr(c.attrInts("output_padding"), n, 0)
	pads := intsOr(c.attrInts("pads"), 2*n, 0)
	out := make([]int, n)
	outShape := c.attrInts("output_shape")
	auto := c.attrString("auto_pad", "NOTSET")
	for d := 0; d < n; d++ {
		full := stride[d]*(sp[d]-1) + outPad[d] + (k[d]-1)*dil[d] + 1
		switch {
		case outShape != nil:
			out[d] = int(outShape[len(outShape)-n+d])
			total := full - out[d]
			if auto == "SAME_UPPER" {
				pads[d], pads[d+n] = total/2, total-total/2
			} else {
				pads[d], pads[d+n] = total-total/2, total/2
			}
		case auto == "SAME_UPPER" || auto == "SAME_LOWER":
			out[d] = sp[d] * stride[d]
			total := full - out[d]
			if auto == "SAME_UPPER" {
				pads[d], pads[d+n] = total/2, total-total/2
			} else {
				pads[d], pads[d+n] = total-total/2, total/2
			}
		default:
			out[d] = full - pads[d] - pads[d+n]
		}
	}
	kSp, inSp, outSp := numel(k), numel(sp), numel(out)
	rows := mg * kSp
	res := NewTensor(x.DType, append([]int{N, M}, out...))
	outStr := contiguousStrides(out)
	for gi := 0; gi < groups; gi++ {
		// W_g is (cg, mg·kSp); its transpose multiplies X_g (cg, inSp).
		wg := &Tensor{Shape: []int{cg, rows}, F: w.F[gi*cg*rows : (gi+1)*cg*rows]}
		wt := transpose(wg, []int{1, 0}).F
		for b := 0; b < N; b++ {
			cols := batchedMatMul(wt, x.F[(b*C+gi*cg)*inSp:(b*C+(gi+1)*cg)*inSp], []int{0}, []int{0}, rows, cg, inSp, c.threads)
			dst := res.F[(b*M+gi*mg)*outSp : (b*M+(gi+1)*mg)*outSp]
			kc := make([]int, n)
			forIndex(sp, func(p int, ix []int) {
				for ki := 0; ki < kSp; ki++ {
					r := ki
					for d := n - 1; d >= 0; d-- {
						kc[d] = r % k[d]
						r /= k[d]
					}
					off, ok := 0, true
					for d := 0; d < n; d++ {
						oc := ix[d]*stride[d] + kc[d]*dil[d] - pads[d]
						if oc < 0 || oc >= out[d] {
							ok = false
							break
						}
						off += oc * outStr[d]
					}
					if !ok {
						continue
					}
					for m := 0; m < mg; m++ {
						dst[m*outSp+off] += cols[(m*kSp+ki)*inSp+p]
					}
				}
			})
		}
	}
	if len(in) > 2 && in[2] != nil {
		for i := range res.F {
			res.F[i] += in[2].F[(i/outSp)%M]
		}
	}
	return []*Tensor{res}, nil
}

// pool runs max or average pooling over N-D windows.
func pool(c *opCtx, x *Tensor, isMax bool) (*Tensor, error) {
	if err := needFloat(x); err != nil {
		return nil, err
	}
	k := toInts(c.attrInts("kernel_shape"))
	if len(k) != len(x.Shape)-2 {
		return nil, fmt.Errorf("kernel_shape %v for input %v", k, x.Shape)
	}
	g, err := geometry(c, x.Shape[2:], k, c.attrInt("ceil_mode", 0) != 0)
	if err != nil {
		return nil, err
	}
	inclPad := c.attrInt("count_include_pad", 0) != 0
	N, C := x.Shape[0], x.Shape[1]
	n := len(k)
	inSp, outSp := numel(g.in), numel(g.out)
	inStr := contiguousStrides(g.in)
	out := NewTensor(x.DType, append([]int{N, C}, g.out...))
	parallelFor(N*C, elemThreads(len(x.F), c.threads), func(lo, hi int) {
		kc := make([]int, n)
		for nc := lo; nc < hi; nc++ {
			src := x.F[nc*inSp : (nc+1)*inSp]
			forIndex(g.out, func(p int, ox []int) {
				acc := math.Inf(-1)
				if !isMax {
					acc = 0
				}
				cnt := 0
				forIndex(g.k, func(_ int, kx []int) {
					off, inside, inPad := 0, true, true
					for d := 0; d < n; d++ {
						kc[d] = ox[d]*g.stride[d] - g.padB[d] + kx[d]*g.dil[d]
						if kc[d] < 0 || kc[d] >= g.in[d] {
							inside = false
						}
						if kc[d] >= g.in[d]+g.padE[d] {
							inPad = false
						}
						off += kc[d] * inStr[d]
					}
					if inside {
						v := float64(src[off])
						if isMax {
							acc = math.Max(acc, v)
						} else {
							acc += v
						}
						cnt++
					} else if inclPad && inPad {
						cnt++
					}
				})
				if !isMax {
					if cnt > 0 {
						acc /= float64(cnt)
					}
				}
				out.F[nc*outSp+p] = float32(acc)
			})
		}
	})
	return out, nil
}

func globalPool(x *Tensor, isMax bool) *Tensor {
	if x.F == nil {
		panic("global pooling needs a float tensor") // becomes an error in runNode
	}
	N, C := x.Shape[0], x.Shape[1]
	sp := numel(x.Shape[2:])
	shape := []int{N, C}
	for range x.Shape[2:] {
		shape = append(shape, 1)
	}
	out := NewTensor(x.DType, shape)
	for nc := 0; nc < N*C; nc++ {
		acc := 0.0
		if isMax {
			acc = math.Inf(-1)
		}
		for _, v := range x.F[nc*sp : (nc+1)*sp] {
			if isMax {
				acc = math.Max(acc, float64(v))
			} else {
				acc += float64(v)
			}
		}
		if !isMax {
			acc /= float64(sp)
		}
		out.F[nc] = float32(acc)
	}
	return out
}

func init() {
	register("", "Conv", opConv)
	register("", "ConvTranspose", opConvTranspose)
	register("", "MaxPool", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		if len(c.node.Outputs) > 1 && c.node.Outputs[1] != nil && c.node.Outputs[1].Name != "" {
			return nil, fmt.Errorf("MaxPool indices output is not supported")
		}
		r, err := pool(c, in[0], true)
		return []*Tensor{r}, err
	})
	register("", "AveragePool", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		r, err := pool(c, in[0], false)
		return []*Tensor{r}, err
	})
	register("", "GlobalAveragePool", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return []*Tensor{globalPool(in[0], false)}, nil
	})
	register("", "GlobalMaxPool", func(c *opCtx, in []*Tensor) ([]*Tensor, error) {
		return []*Tensor{globalPool(in[0], true)}, nil
	})
}
