package eval

import (
	"fmt"
	"sort"

	"github.com/attnopt/attnopt/graph"
)

// Indexing ops: gathers, scatters, selection.

func opGather(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x, ind := in[0], in[1]
	if ind.I == nil {
		return nil, fmt.Errorf("Gather indices must be integers, got %s", ind.DType)
	}
	ax, err := normAxis(c.attrInt("axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	ids := ind.ints()
	d := x.Shape[ax]
	outer := numel(x.Shape[:ax])
	inner := numel(x.Shape[ax+1:])
	shape := append(append(append([]int{}, x.Shape[:ax]...), ind.Shape...), x.Shape[ax+1:]...)
	idx := make([]int, 0, numel(shape))
	for o := 0; o < outer; o++ {
		for _, id := range ids {
			if id < 0 {
				id += int64(d)
			}
			if id < 0 || id >= int64(d) {
				return nil, fmt.Errorf("gather index %d out of range [0,%d)", id, d)
			}
			for i := 0; i < inner; i++ {
				idx = append(idx, (o*d+int(id))*inner+i)
			}
		}
	}
	return []*Tensor{take(x, shape, idx)}, nil
}

func opGatherElements(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x, ind := in[0], in[1]
	ax, err := normAxis(c.attrInt("axis", 0), len(x.Shape))
	if err != nil {
		return nil, err
	}
	ids := ind.ints()
	cs := contiguousStrides(x.Shape)
	idx := make([]int, len(ids))
	var ferr error
	forIndex(ind.Shape, func(k int, ix []int) {
		off := 0
		for a, v := range ix {
			if a == ax {
				id := ids[k]
				if id < 0 {
					id += int64(x.Shape[ax])
				}
				if id < 0 || id >= int64(x.Shape[ax]) {
					ferr = fmt.Errorf("index %d out of range", ids[k])
					id = 0
				}
				v = int(id)
			}
			off += v * cs[a]
		}
		idx[k] = off
	})
	if ferr != nil {
		return nil, ferr
	}
	return []*Tensor{take(x, ind.Shape, idx)}, nil
}

func opGatherND(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x, ind := in[0], in[1]
	b := int(c.attrInt("batch_dims", 0))
	q := len(ind.Shape)
	k := ind.Shape[q-1]
	if b+k > len(x.Shape) {
		return nil, fmt.Errorf("GatherND: index depth %d + batch_dims %d > rank %d", k, b, len(x.Shape))
	}
	ids := ind.ints()
	shape := append(append([]int{}, ind.Shape[:q-1]...), x.Shape[b+k:]...)
	slice := numel(x.Shape[b+k:])
	cs := contiguousStrides(x.Shape)
	tuples := numel(ind.Shape[:q-1])
	perBatch := tuples / max(numel(ind.Shape[:b]), 1)
	idx := make([]int, 0, numel(shape))
	for t := 0; t < tuples; t++ {
		off := 0
		// the leading batch_dims come from the tuple's own position
		bi := t / max(perBatch, 1)
		for a := b - 1; a >= 0; a-- {
			off += (bi % x.Shape[a]) * cs[a]
			bi /= x.Shape[a]
		}
		for a := 0; a < k; a++ {
			id := ids[t*k+a]
			d := int64(x.Shape[b+a])
			if id < 0 {
				id += d
			}
			if id < 0 || id >= d {
				return nil, fmt.Errorf("GatherND index %d out of range", ids[t*k+a])
			}
			off += int(id) * cs[b+a]
		}
		for i := 0; i < slice; i++ {
			idx = append(idx, off+i)
		}
	}
	return []*Tensor{take(x, shape, idx)}, nil
}

func opWhere(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	cond, a, b := in[0], in[1], in[2]
	shape, err := broadcastShapes(cond.Shape, a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	out := NewTensor(a.DType, shape)
	st := [][]int{bcastStrides(cond.Shape, shape), bcastStrides(a.Shape, shape), bcastStrides(b.Shape, shape)}
	cb := cond.B
	if cb == nil {
		cb = castTo(cond, graph.Bool).B
	}
	walk(shape, st, func(o int, offs []int) {
		src, i := b, offs[2]
		if cb[offs[0]] {
			src, i = a, offs[1]
		}
		switch {
		case out.F != nil:
			out.F[o] = src.F[i]
		case out.I != nil:
			out.I[o] = src.I[i]
		default:
			out.B[o] = src.B[i]
		}
	})
	return []*Tensor{out}, nil
}

func opScatterND(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	x, ind, upd := in[0].Clone(), in[1], in[2]
	red := c.attrString("reduction", "none")
	k := ind.Shape[len(ind.Shape)-1]
	ids := ind.ints()
	cs := contiguousStrides(x.Shape)
	slice := numel(x.Shape[k:])
	n := len(ids) / max(k, 1)
	for u := 0; u < n; u++ {
		off := 0
		for a := 0; a < k; a++ {
			id := ids[u*k+a]
			if id < 0 {
				id += int64(x.Shape[a])
			}
			off += int(id) * cs[a]
		}
		for i := 0; i < slice; i++ {
			d, s := off+i, u*slice+i
			switch {
			case x.F != nil:
				x.F[d] = scatterF(red, x.F[d], upd.F[s])
			case x.I != nil:
				x.I[d] = int64(scatterF(red, float32(x.I[d]), float32(upd.I[s])))
				if red == "none" {
					x.I[d] = upd.I[s]
				}
			default:
				x.B[d] = upd.B[s]
			}
		}
	}
	return []*Tensor{x}, nil
}

func scatterF(red string, old, v float32) float32 {
	switch red {
	case "add":
		return old + v
	case "mul":
		return old * v
	case "max":
		return max(old, v)
	case "min":
		return min(old, v)
	}
	return v
}

// argsortDesc is used by TopK; stable so ties keep the lower index first.
func argsortDesc(v []float64, largest bool) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if largest {
			return v[idx[a]] > v[idx[b]]
		}
		return v[idx[a]] < v[idx[b]]
	})
	return idx
}

func init() { register("", "GatherND", opGatherND) }
