// Package validate compares an original model with its rewrite on seeded
// inputs generated from what the graph does with each input (cases.go,
// roles.go), or the user's own, and gives per-output error metrics and a
// verdict.
package validate

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// DefaultDim is the size given to symbolic dims nobody pinned.
const DefaultDim = 8

// RandomInputs makes one seeded tensor per graph input, the "random" case:
// floats from N(0,1), bool masks with at least one kept key per row,
// integer masks that keep every key, token and position ids within the
// tables they index, lengths at their Range's limit, other integers in
// [0, 8).
func RandomInputs(m *graph.Model, seed int64, dims map[string]int64) (map[string]*eval.Tensor, error) {
	return genInputs(m, inputRoles(m, nil, dims), caseRandom, seed, dims)
}

// genInputs makes m's inputs for one case. Floats that are data draw from
// one stream seeded by seed alone, so every case sees the same data and
// differs only in its masks and lengths.
func genInputs(m *graph.Model, roles map[string]inputRole, k caseKind, seed int64, dims map[string]int64) (map[string]*eval.Tensor, error) {
	data := rand.New(rand.NewSource(seed))
	pattern := rand.New(rand.NewSource(seed*31 + int64(k) + 1))
	out := map[string]*eval.Tensor{}
	for _, v := range m.Graph.Inputs {
		shape, err := concreteShape(v, dims)
		if err != nil {
			return nil, err
		}
		t := eval.NewTensor(v.Type.DType, shape)
		r := roles[v.Name]
		switch {
		case v.Type.DType.IsFloat():
			for i := range t.F {
				t.F[i] = float32(data.NormFloat64())
			}
			if r.kind == roleMask && k != caseRandom {
				// An additive mask: 0 where a key is kept, the fill
				// where it is dropped.
				keep := keepPattern(shape, r.keysFromEnd, k, pattern)
				for i := range t.F {
					t.F[i] = 0
					if !keep[i] {
						t.F[i] = float32(r.fill)
					}
				}
			}
		case v.Type.DType == graph.Bool:
			keep := keepPattern(shape, r.keysFromEnd, k, pattern)
			for i := range t.B {
				t.B[i] = keep[i] != r.dropTrue
			}
		case v.Type.DType.IsInt():
			fillInts(t, r, k, pattern)
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
		// A product ("4*batch", BLOOM's batch·heads) is the product of
		// its symbols' sizes, as concreteBytes counts it, so it agrees
		// with the dims the graph computes from the others.
		shape[i] = DefaultDim
		if n, ok := concreteDim(d, dims); ok {
			shape[i] = int(n)
		}
	}
	return shape, nil
}

// symValue is a symbol's size: its pinned value, DefaultDim, or for an
// opaque sum ("past+seq", graph.Dim.Add's name and Optimum's
// attention_mask axis) the sum of its terms' sizes, so a mask spanning the
// cache and the new tokens is as long as both.
func symValue(s string, dims map[string]int64) int64 {
	if x := dims[s]; x > 0 {
		return x
	}
	terms := strings.Split(s, "+")
	if len(terms) == 1 {
		return DefaultDim
	}
	n := int64(0)
	for _, t := range terms {
		if c, err := strconv.ParseInt(t, 10, 64); err == nil {
			n += c
		} else {
			n += symValue(t, dims)
		}
	}
	return n
}

// fillInts generates an integer input by its role.
func fillInts(t *eval.Tensor, r inputRole, k caseKind, rng *rand.Rand) {
	switch r.kind {
	case roleIndex:
		for i := range t.I {
			t.I[i] = rng.Int63n(r.bound)
		}
	case roleLength:
		fillLengths(t.I, r.bound, k, rng)
	case roleMask:
		keep := keepPattern(t.Shape, r.keysFromEnd, k, rng)
		if k == caseRandom {
			// A random 0/1 attention_mask is no padding any tokenizer
			// writes; the random case keeps every token.
			keep = allKept(len(t.I))
		}
		for i := range t.I {
			if keep[i] != r.dropTrue {
				t.I[i] = 1
			}
		}
	default:
		for i := range t.I {
			t.I[i] = rng.Int63n(8)
		}
	}
}

// fillLengths: lengths of a batch compared with Range(0, bound).
func fillLengths(xs []int64, bound int64, k caseKind, rng *rand.Rand) {
	for i := range xs {
		switch k {
		case caseRandom, caseAllKeep:
			xs[i] = bound
		case caseMaskedRow:
			xs[i] = 1 + rng.Int63n(bound)
			if i == 0 {
				xs[i] = 0
			}
		default:
			xs[i] = bound
			if bound > 1 {
				xs[i] = 1 + rng.Int63n(bound-1)
			}
		}
	}
}

func allKept(n int) []bool {
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	return keep
}
