package validate

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// indexBound is the exclusive upper bound on the values of integer input v
// that keeps every table it indexes in range: Gather's indices (token ids,
// a rotary or position table), GatherND's (a padding mask read as
// attention_mask[batch_idx, kv_idx], as HF's mask functions export), after
// any arithmetic on the way that moves the values by a known amount
// (position ids + the cache's length). ok is false when v indexes nothing.
func indexBound(v *graph.Value, dims map[string]int64) (int64, bool) {
	bound, found := int64(math.MaxInt64), false
	forwardIndex(v, dims, func(u graph.Use, offset int64) {
		size, ok := indexedSize(u, dims)
		if ok && size-offset > 0 {
			bound, found = min(bound, size-offset), true
		}
	})
	return bound, found
}

// indexedSize is the size of the axis (the smallest of the axes, for
// GatherND, whose index slot the value may fill) that use u indexes.
func indexedSize(u graph.Use, dims map[string]int64) (int64, bool) {
	n := u.Node
	if u.Index != 1 || n.Input(0) == nil || !n.Input(0).Type.Ranked {
		return 0, false
	}
	data := n.Input(0).Type.Shape
	var axes []int
	switch {
	case n.Is("Gather"):
		axis := int(n.AttrInt("axis", 0))
		if axis < 0 {
			axis += len(data)
		}
		axes = []int{axis}
	case n.Is("GatherND"):
		b := int(n.AttrInt("batch_dims", 0))
		k := len(data) - b
		if idx := n.Input(1).Type; idx.Ranked && idx.Rank() > 0 {
			if last, ok := concreteDim(idx.Shape[idx.Rank()-1], dims); ok {
				k = int(last)
			}
		}
		for j := b; j < b+k && j < len(data); j++ {
			axes = append(axes, j)
		}
	}
	size, found := int64(math.MaxInt64), false
	for _, a := range axes {
		if a < 0 || a >= len(data) {
			continue
		}
		if d, ok := concreteDim(data[a], dims); ok && d > 0 {
			size, found = min(size, d), true
		}
	}
	return size, found
}

// forwardIndex visits the readers of v's values through the ops that carry
// them on (passThrough, Concat's and Gather's data, Slice, Tile, Where's
// branches), adding to the offset what an Add or Sub of a known integer
// moves them by.
func forwardIndex(v *graph.Value, dims map[string]int64, visit func(u graph.Use, offset int64)) {
	seen := map[*graph.Value]bool{}
	var walk func(v *graph.Value, offset int64, depth int)
	walk = func(v *graph.Value, offset int64, depth int) {
		if v == nil || seen[v] || depth > 16 {
			return
		}
		seen[v] = true
		for _, u := range v.Uses() {
			n := u.Node
			if u.Index < 0 || len(n.Outputs) == 0 {
				continue
			}
			switch {
			case passThrough(n) && u.Index == 0, n.Is("Concat"), n.Is("Slice") && u.Index == 0,
				n.Is("Tile") && u.Index == 0, n.Is("Where") && u.Index > 0:
				walk(n.Output(0), offset, depth+1)
			case n.Is("Gather") && u.Index == 0:
				walk(n.Output(0), offset, depth+1)
			case n.Is("Add") || n.Is("Sub") && u.Index == 0:
				if c, ok := intOf(n.Input(1-u.Index), dims); ok {
					if n.Is("Sub") {
						c = -c
					}
					walk(n.Output(0), offset+c, depth+1)
				}
			default:
				visit(u, offset)
			}
		}
	}
	walk(v, 0, 0)
}
