// Package validate compares an original model with its rewrite on seeded
// random inputs and gives per-output error metrics and a verdict.
package validate

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// DefaultDim is the size given to symbolic dims nobody pinned.
const DefaultDim = 8

// RandomInputs makes one seeded tensor per graph input: floats from N(0,1),
// bool masks with at least one true per row (the last axis), integers in a
// small range (ids, lengths) so Gather and friends stay in bounds.
func RandomInputs(m *graph.Model, seed int64, dims map[string]int64) (map[string]*eval.Tensor, error) {
	rng := rand.New(rand.NewSource(seed))
	out := map[string]*eval.Tensor{}
	for _, v := range m.Graph.Inputs {
		shape, err := concreteShape(v, dims)
		if err != nil {
			return nil, err
		}
		t := eval.NewTensor(v.Type.DType, shape)
		switch {
		case v.Type.DType.IsFloat():
			for i := range t.F {
				t.F[i] = float32(rng.NormFloat64())
			}
		case v.Type.DType == graph.Bool:
			fillMask(t, rng)
		case v.Type.DType.IsInt():
			fillInts(t, v.Name, rng)
		default:
			return nil, fmt.Errorf("input %q has type %s, which validation cannot generate", v.Name, v.Type.DType)
		}
		// Round floats to the input's precision (fp16/bf16) through its
		// storage form, so both runtimes see exactly the same values.
		raw, err := t.Raw()
		if err != nil {
			return nil, err
		}
		if t, err = eval.FromRaw(v.Type.DType, shape, raw); err != nil {
			return nil, err
		}
		out[v.Name] = t
	}
	return out, nil
}

func concreteShape(v *graph.Value, dims map[string]int64) ([]int, error) {
	if !v.Type.Ranked {
		return nil, fmt.Errorf("input %q has no shape; pin it with --shape %s=DxD…", v.Name, v.Name)
	}
	if b := concreteBytes(v.Type, dims); b < 0 || b > MaxTensorBytes {
		return nil, fmt.Errorf("input %q (%s) is too large to generate at these dims (limit %d bytes); pin smaller dims with --dim", v.Name, v.Type, int64(MaxTensorBytes))
	}
	shape := make([]int, len(v.Type.Shape))
	for i, d := range v.Type.Shape {
		switch {
		case d.Static():
			shape[i] = int(d.C)
		case len(d.Syms) == 1 && dims[d.Syms[0]] > 0:
			shape[i] = int(dims[d.Syms[0]])
		default:
			shape[i] = DefaultDim
		}
	}
	return shape, nil
}

func fillMask(t *eval.Tensor, rng *rand.Rand) {
	last := 1
	if len(t.Shape) > 0 {
		last = t.Shape[len(t.Shape)-1]
	}
	for i := range t.B {
		t.B[i] = rng.Float64() < 0.7
	}
	if last == 0 {
		return
	}
	for row := 0; row+last <= len(t.B); row += last {
		t.B[row+rng.Intn(last)] = true
	}
}

func fillInts(t *eval.Tensor, name string, rng *rand.Rand) {
	lo, hi := int64(0), int64(8)
	n := strings.ToLower(name)
	if strings.Contains(n, "mask") {
		lo, hi = 1, 2 // attention masks of ids: keep every token
	}
	for i := range t.I {
		t.I[i] = lo + rng.Int63n(hi-lo)
	}
}
