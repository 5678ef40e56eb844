package eval

import (
	"fmt"
	"math/rand"

	"github.com/attnopt/attnopt/graph"
)

// RandomInputs makes seeded inputs for every graph input of m: floats from
// N(0,1) (rounded to their type), integers 1 (a valid token id, a "keep"
// mask entry, a length of at least one), bools true. A symbolic dim takes
// pins[its text] (e.g. "seq_len" or "past_seq_len+seq_len"), else def.
func RandomInputs(m *graph.Model, seed int64, pins map[string]int, def int) (map[string]*Tensor, error) {
	rng := rand.New(rand.NewSource(seed))
	ins := map[string]*Tensor{}
	for _, v := range m.Graph.Inputs {
		if !v.Type.Ranked {
			return nil, fmt.Errorf("input %q has unknown rank", v.Name)
		}
		if v.Type.DType == graph.String || v.Type.DType.Bits() == 0 || v.Type.DType.Bits()%8 != 0 {
			return nil, fmt.Errorf("input %q: cannot make %s data", v.Name, v.Type.DType)
		}
		shape := make([]int, len(v.Type.Shape))
		for i, d := range v.Type.Shape {
			if x, ok := d.Value(); ok {
				shape[i] = int(x)
			} else if p, ok := pins[d.String()]; ok {
				shape[i] = p
			} else {
				shape[i] = def
			}
		}
		t := NewTensor(v.Type.DType, shape)
		switch {
		case t.F != nil:
			for i := range t.F {
				t.F[i] = float32(rng.NormFloat64())
			}
		case t.I != nil:
			for i := range t.I {
				t.I[i] = 1
			}
		default:
			for i := range t.B {
				t.B[i] = true
			}
		}
		ins[v.Name] = t.normalize()
	}
	return ins, nil
}
