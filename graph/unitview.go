package graph

// UnitViewAxis maps axis at of out to the axis of in that it views, when a
// Reshape (or Unsqueeze, Squeeze) from in to out only adds or removes axes
// of size 1: the other axes keep their order and sizes. ok is false for any
// other reshape, or when at is an added unit axis.
func UnitViewAxis(in, out Shape, at int) (int, bool) {
	li, lo := longAxes(in), longAxes(out)
	if len(li) != len(lo) {
		return 0, false
	}
	for k := range li {
		if !in[li[k]].Equal(out[lo[k]]) {
			return 0, false
		}
	}
	for k, o := range lo {
		if o == at {
			return li[k], true
		}
	}
	return 0, false
}

// longAxes are the axes of sh not known to be 1.
func longAxes(sh Shape) []int {
	var axes []int
	for i, d := range sh {
		if x, ok := d.Value(); !ok || x != 1 {
			axes = append(axes, i)
		}
	}
	return axes
}
