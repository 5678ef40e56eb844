package validate

import (
	"fmt"
	"sort"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// userValues are the inputs of p.a in the --inputs case: the user's own
// when a is the whole original, else the values the original computes
// from them for the site's inputs, by running the part of the original
// that computes them.
func userValues(p pair, r Runner, opts Options) (map[string]*eval.Tensor, error) {
	out := map[string]*eval.Tensor{}
	if p.src == nil {
		for k, v := range opts.Inputs {
			out[k] = v
		}
		return out, nil
	}
	var need []string
	for _, v := range p.a.Graph.Inputs {
		if w := p.src.Graph.Value(v.Name); w != nil && w.Kind == graph.KindInput {
			out[v.Name] = opts.Inputs[v.Name]
			continue
		}
		need = append(need, v.Name)
	}
	if len(need) == 0 {
		return out, nil
	}
	prefix, err := graph.Extract(p.src, need, func(*graph.Value) bool { return false })
	if err != nil {
		return nil, fmt.Errorf("cannot compute the site's inputs from %s: %v", opts.InputsName, err)
	}
	if err := CheckModelScope(prefix, opts.Dims); err != nil {
		return nil, fmt.Errorf("cannot compute the site's inputs from %s: %v", opts.InputsName, err)
	}
	vals, err := r.Run(prefix, pick(opts.Inputs, prefix))
	if err != nil {
		return nil, fmt.Errorf("original, computing the site's inputs from %s: %w", opts.InputsName, err)
	}
	for _, n := range need {
		out[n] = vals[n]
	}
	return out, nil
}

// CheckInputs verifies that in gives every graph input of m, with its
// dtype, rank and static dims, and nothing else; name is the file.
func CheckInputs(m *graph.Model, in map[string]*eval.Tensor, name string) error {
	want := map[string]bool{}
	for _, v := range m.Graph.Inputs {
		want[v.Name] = true
		t := in[v.Name]
		if t == nil {
			return fmt.Errorf("%s: no array for input %q", name, v.Name)
		}
		if t.DType != v.Type.DType {
			return fmt.Errorf("%s: array %q is %s; the input is %s", name, v.Name, t.DType, v.Type.DType)
		}
		if !v.Type.Ranked {
			continue
		}
		if len(t.Shape) != len(v.Type.Shape) {
			return fmt.Errorf("%s: array %q has shape %v; the input is %s", name, v.Name, t.Shape, v.Type)
		}
		for i, d := range v.Type.Shape {
			if d.Static() && int64(t.Shape[i]) != d.C {
				return fmt.Errorf("%s: array %q has shape %v; the input is %s", name, v.Name, t.Shape, v.Type)
			}
		}
	}
	var extra []string
	for k := range in {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("%s: array %q is not an input of the original model", name, extra[0])
	}
	return nil
}
