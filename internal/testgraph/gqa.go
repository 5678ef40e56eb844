package testgraph

// repeatedKV declares k and v with o.KVHeads heads and repeats them to o.H
// the way o.Repeat says; for "expand_3d" K comes out already transposed and
// o.KForm becomes "pre"; "expand_one" expands KVHeads 1 to H directly.
func repeatedKV(b *B, o *Opts) (k, v string) {
	hkv, rep := int64(o.KVHeads), int64(o.H/o.KVHeads)
	bb, h, nk := int64(o.B), int64(o.H), int64(o.NK)
	k = b.Input("k", o.DType, o.B, o.KVHeads, o.NK, o.D)
	v = b.Input("v", o.DType, o.B, o.KVHeads, o.NK, o.DV)
	five := func(x string, d int64) string {
		u := b.Node("Unsqueeze", []string{x, b.I64(2)})
		if o.Repeat == "tile" {
			return b.Node("Tile", []string{u, b.I64(1, 1, rep, 1, 1)})
		}
		return b.Node("Expand", []string{u, b.I64(bb, hkv, rep, nk, d)})
	}
	rep4 := func(x string, d int64) string {
		if o.Repeat == "gather" {
			idx := make([]int64, 0, h)
			for i := int64(0); i < h; i++ {
				idx = append(idx, i/rep)
			}
			return b.Node("Gather", []string{x, b.I64(idx...)}, Int("axis", 1))
		}
		return b.Node("Reshape", []string{five(x, d), b.I64(bb, h, nk, d)})
	}
	if o.Repeat == "expand_one" {
		// multi-query: the one kv head expanded to all H
		k = b.Node("Expand", []string{k, b.I64(bb, h, nk, int64(o.D))})
		return k, b.Node("Expand", []string{v, b.I64(bb, h, nk, int64(o.DV))})
	}
	if o.Repeat == "expand_3d" {
		k3 := b.Node("Reshape", []string{five(k, int64(o.D)), b.I64(bb*h, nk, int64(o.D))})
		kt := b.Node("Transpose", []string{k3}, Ints("perm", 0, 2, 1))
		o.KForm = "pre"
		return b.Node("Reshape", []string{kt, b.I64(bb, h, int64(o.D), nk)}), rep4(v, int64(o.DV))
	}
	return rep4(k, int64(o.D)), rep4(v, int64(o.DV))
}
