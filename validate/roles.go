package validate

import (
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// roleKind is what a model does with one of its inputs, as far as the
// values validation feeds it must respect or exercise.
type roleKind int

const (
	roleData   roleKind = iota // anything: floats N(0,1), small integers
	roleMask                   // keeps or drops keys (last axis): padding patterns
	roleIndex                  // Gather indices into a table: [0, bound)
	roleLength                 // compared with a Range: a length in [0, bound]
)

// inputRole is how validation generates one input.
type inputRole struct {
	kind  roleKind
	bound int64 // roleIndex: table size; roleLength: the Range's limit
	// roleMask: drop marks the value that removes a key (false / 0 unless
	// the model tests for it: Where(m, fill, x) drops where true); fill is
	// what an additive float mask adds to a dropped key.
	dropTrue bool
	fill     float64
	// roleMask: the axis of the keys, counted back from the last (0: the
	// last), so padding drops keys wherever the mask holds them.
	keysFromEnd int
}

// inputRoles derives a role for every graph input of m from the nodes that
// read it, never from its name. src, when set, is the model m was
// extracted from: an additive mask cut from its producer takes the fill
// that producer writes (dynamo's Where(mask, 0, -3.4e38), HF's
// (1 - mask)·finfo.min).
func inputRoles(m *graph.Model, src *graph.Model, dims map[string]int64) map[string]inputRole {
	roles := map[string]inputRole{}
	for _, v := range m.Graph.Inputs {
		if b, ok := indexBound(v, dims); ok && v.Type.DType.IsInt() {
			roles[v.Name] = inputRole{kind: roleIndex, bound: b}
		} else if b, ok := rangeBound(v, dims); ok && v.Type.DType.IsInt() {
			roles[v.Name] = inputRole{kind: roleLength, bound: b}
		}
	}
	markMask := func(term *graph.Value, dropTrue bool, fill *float64, keys graph.Dim) {
		for _, in := range contentSources(term) {
			if _, taken := roles[in.Name]; taken {
				continue
			}
			r := inputRole{kind: roleMask, dropTrue: dropTrue && in == term, keysFromEnd: keysAxis(in, keys, dims)}
			if in.Type.DType.IsFloat() {
				// Only the term itself: a float reaching it through
				// arithmetic is data (hidden states), not a mask.
				if in != term {
					continue
				}
				r.fill = lowest(in.Type.DType)
				if fill != nil {
					r.fill = *fill
				} else if f, ok := fillOf(src, in.Name); ok {
					r.fill = f
				} else if _, moderate := fillBelow(src, in.Name, -10, true); !moderate && computedIn(src, in.Name) {
					// Cut from a value the source computes with no
					// fill near it, not even a moderate one (Swin's
					// -100): a bias (T5's relative positions), which
					// never drops a key.
					continue
				}
			}
			roles[in.Name] = r
		}
	}
	for _, s := range passes.FindSites(m.Graph).Sites {
		// One additive mask per site: a second (a position bias beside a
		// padding mask) keeps random values, since two fills summed
		// overflow to -inf where no exporter writes that.
		// A padding mask the site drops keys with (a bool mask, or a
		// Where(mask, 0, fill)) makes the float terms beside it biases
		// (BLOOM's ALiBi next to its padding): they keep random values.
		additive := 0
		for _, t := range s.Masks {
			if t.Value != nil && (t.Kind != passes.MaskAdditive || t.Fill != nil) {
				additive++
			}
		}
		for _, t := range s.Masks {
			if t.Value == nil {
				continue
			}
			if t.Kind == passes.MaskAdditive && t.Fill == nil {
				if additive++; additive > 1 {
					continue
				}
			}
			markMask(t.Value, t.Inverted, t.Fill, s.KVLen)
		}
	}
	for _, n := range m.Graph.Nodes {
		for _, i := range fusedMaskSlots(n) {
			if v := n.Input(i); v != nil {
				markMask(v, false, nil, graph.Dim{Unknown: true})
			}
		}
	}
	// An integer or bool input cast to bool or tested against a constant
	// is a mask too, whatever reads it next.
	for _, v := range m.Graph.Inputs {
		if _, taken := roles[v.Name]; !taken && (v.Type.DType.IsInt() || v.Type.DType == graph.Bool) && testedAsMask(v) {
			roles[v.Name] = inputRole{kind: roleMask}
		}
	}
	return roles
}

// keysAxis is where a mask input holds the site's keys, counted back from
// its last axis: the last axis when its size is the key length (or nothing
// else is), else the last axis of that size.
func keysAxis(in *graph.Value, keys graph.Dim, dims map[string]int64) int {
	nk, ok := concreteDim(keys, dims)
	if !ok || !in.Type.Ranked || in.Type.Rank() == 0 {
		return 0
	}
	shape := in.Type.Shape
	for i := len(shape) - 1; i >= 0; i-- {
		if n, ok := concreteDim(shape[i], dims); ok && n == nk {
			return len(shape) - 1 - i
		}
	}
	return 0
}

// fusedMaskSlots are the mask inputs of already-fused attention ops.
func fusedMaskSlots(n *graph.Node) []int {
	switch {
	case n.Domain == "attnopt" && (n.OpType == "FlashAttention" || n.OpType == "WindowAttention"):
		return []int{3}
	case n.Domain == "com.microsoft" && n.OpType == "MultiHeadAttention":
		return []int{4, 5} // key_padding_mask, attention_bias
	case n.Domain == "com.microsoft" && n.OpType == "Attention":
		return []int{3} // mask_index
	case n.Is("Attention"):
		return []int{3} // attn_mask
	}
	return nil
}

// dataSlots are the inputs of n whose values (not only their shapes or
// the index arithmetic beside them) flow into its output.
func dataSlots(n *graph.Node) []int {
	switch {
	case n.Is("Shape") || n.Is("Size") || n.Is("ConstantOfShape") || n.Is("Range") || n.Is("EyeLike"):
		return nil
	case n.Is("Reshape") || n.Is("Expand") || n.Is("Slice") || n.Is("Unsqueeze") || n.Is("Squeeze") ||
		n.Is("Tile") || n.Is("Pad") || n.Is("Transpose") || n.Is("Cast") || n.Is("Identity") || n.Is("Flatten") || n.Is("CumSum"):
		return []int{0}
	}
	out := make([]int, len(n.Inputs))
	for i := range out {
		out[i] = i
	}
	return out
}

// contentSources are the graph inputs whose values reach v (v itself when
// it is one), walking producers through their data inputs.
func contentSources(v *graph.Value) []*graph.Value {
	seen := map[*graph.Value]bool{}
	var out []*graph.Value
	var walk func(v *graph.Value, depth int)
	walk = func(v *graph.Value, depth int) {
		if v == nil || seen[v] || depth > 64 {
			return
		}
		seen[v] = true
		if v.Kind == graph.KindInput {
			out = append(out, v)
			return
		}
		p := v.Producer()
		if p == nil {
			return
		}
		for _, i := range dataSlots(p) {
			walk(p.Input(i), depth+1)
		}
	}
	walk(v, 0)
	return out
}

// passThrough: ops that carry an index or length unchanged in value.
func passThrough(n *graph.Node) bool {
	return n.Is("Cast") || n.Is("Reshape") || n.Is("Unsqueeze") || n.Is("Squeeze") || n.Is("Flatten") ||
		n.Is("Identity") || n.Is("Expand") || n.Is("Transpose")
}

// forward visits the readers of v through pass-through ops (data slot 0).
func forward(v *graph.Value, visit func(u graph.Use)) {
	seen := map[*graph.Value]bool{}
	var walk func(v *graph.Value, depth int)
	walk = func(v *graph.Value, depth int) {
		if v == nil || seen[v] || depth > 16 {
			return
		}
		seen[v] = true
		for _, u := range v.Uses() {
			if u.Index < 0 {
				continue
			}
			if passThrough(u.Node) && u.Index == 0 {
				walk(u.Node.Output(0), depth+1)
				continue
			}
			visit(u)
		}
	}
	walk(v, 0)
}

// rangeBound is the limit of a Range that v is compared with (a length:
// Less(Range(0, n), len) keeps the first len keys).
func rangeBound(v *graph.Value, dims map[string]int64) (int64, bool) {
	bound, found := int64(0), false
	forward(v, func(u graph.Use) {
		n := u.Node
		if !(n.Is("Less") || n.Is("Greater") || n.Is("LessOrEqual") || n.Is("GreaterOrEqual")) {
			return
		}
		other := n.Input(1 - u.Index)
		for i := 0; other != nil && i < 8; i++ {
			p := other.Producer()
			if p == nil {
				return
			}
			if p.Is("Range") {
				if lim, ok := intOf(p.Input(1), dims); ok && lim > 0 && lim <= MaxTensorBytes {
					bound, found = max(bound, lim), true
				}
				return
			}
			if !passThrough(p) {
				return
			}
			other = p.Input(0)
		}
	})
	return bound, found
}

// testedAsMask: v is cast to bool or compared for equality with a
// constant (attention_mask == 0) before anything else reads it.
func testedAsMask(v *graph.Value) bool {
	found := false
	forward(v, func(u graph.Use) {
		switch n := u.Node; {
		case n.Is("Cast") && n.AttrInt("to", 0) == int64(graph.Bool):
			found = true
		case n.Is("Not"):
			found = true
		case n.Is("Equal"):
			if c := n.Input(1 - u.Index); c != nil && c.Kind == graph.KindInit {
				found = true
			}
		}
	})
	// Cast to bool is a pass-through above: look at the first hop too.
	for _, u := range v.Uses() {
		if u.Node.Is("Cast") && u.Node.AttrInt("to", 0) == int64(graph.Bool) {
			found = true
		}
	}
	return found
}

// intOf is the value of a scalar integer at the validation dims: a
// constant, or a dim read with Shape (its symbols pinned or DefaultDim).
func intOf(v *graph.Value, dims map[string]int64) (int64, bool) {
	if v == nil {
		return 0, false
	}
	ds, ok := v.IntContent()
	if !ok || len(ds) != 1 {
		return 0, false
	}
	return concreteDim(ds[0], dims)
}

// concreteDim is the size d takes at the validation dims, as
// concreteShape gives inputs: a symbol is pinned or DefaultDim, a sum
// ("past+seq") the sum of its terms, a product ("4*batch") the product.
func concreteDim(d graph.Dim, dims map[string]int64) (int64, bool) {
	if d.Unknown {
		return 0, false
	}
	n := d.C
	if !d.Static() {
		n = max(d.C, 1)
		for _, s := range d.Syms {
			if n = mulSat(n, symValue(s, dims)); n < 0 {
				return 0, false
			}
		}
	}
	return n, true
}

// fillOf finds the large negative constant the producer of src's value
// name adds to dropped keys, a few nodes up.
func fillOf(src *graph.Model, name string) (float64, bool) {
	return fillBelow(src, name, -1e4, false)
}

// fillBelow is the most negative float scalar at or below limit a few
// nodes up the producer of src's value name; with tensors, the values of
// constant tensors count too (a precomputed mask, Swin's 0/-100).
func fillBelow(src *graph.Model, name string, limit float64, tensors bool) (float64, bool) {
	if src == nil {
		return 0, false
	}
	v := src.Graph.Value(name)
	best, found := 0.0, false
	seen := map[*graph.Value]bool{}
	var walk func(v *graph.Value, depth int)
	walk = func(v *graph.Value, depth int) {
		if v == nil || seen[v] || depth > 6 {
			return
		}
		seen[v] = true
		if x, ok := v.Scalar(); ok && v.Type.DType.IsFloat() {
			if x <= limit && (!found || x < best) {
				best, found = x, true
			}
			return
		}
		if tensors && v.Const != nil && v.Type.DType.IsFloat() && v.Const.Numel() <= 1<<20 {
			if xs, err := v.Const.Float64s(); err == nil {
				for _, x := range xs {
					if x <= limit && (!found || x < best) {
						best, found = x, true
					}
				}
			}
			return
		}
		if p := v.Producer(); p != nil {
			for _, in := range p.Inputs {
				walk(in, depth+1)
			}
		}
	}
	walk(v, 0)
	return best, found
}

// computedIn: src computes the value name (a node's output, not a graph
// input or an initializer).
func computedIn(src *graph.Model, name string) bool {
	if src == nil {
		return false
	}
	v := src.Graph.Value(name)
	return v != nil && v.Producer() != nil
}

// lowest is the most negative finite value of a float type (torch's
// finfo.min, the fill exporters write).
func lowest(dt graph.DType) float64 {
	switch dt {
	case graph.Float16:
		return -65504
	case graph.BFloat16:
		return -3.3895313892515355e38
	case graph.Float64:
		return -math.MaxFloat64
	}
	return -math.MaxFloat32
}
