package graph

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Pins fixes symbolic input dims: whole input shapes by name and single
// symbols by name (docs/design.md §6: --shape NAME=1x3x224x224, --dim SYM=N).
type Pins struct {
	Shapes map[string][]int64
	Dims   map[string]int64
}

// ParseShapePin parses "NAME=1x3x224x224".
func ParseShapePin(s string) (string, []int64, error) {
	name, dims, ok := strings.Cut(s, "=")
	if !ok || name == "" || dims == "" {
		return "", nil, fmt.Errorf("--shape %q: want NAME=DxDx…", s)
	}
	var out []int64
	for _, p := range strings.Split(dims, "x") {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 {
			return "", nil, fmt.Errorf("--shape %q: %q is not a dimension", s, p)
		}
		out = append(out, v)
	}
	return name, out, nil
}

// ParseDimPin parses "SYM=N".
func ParseDimPin(s string) (string, int64, error) {
	name, val, ok := strings.Cut(s, "=")
	v, err := strconv.ParseInt(val, 10, 64)
	if !ok || name == "" || err != nil || v < 0 {
		return "", 0, fmt.Errorf("--dim %q: want SYMBOL=N", s)
	}
	return name, v, nil
}

// Apply sets the pinned input types and re-runs shape inference.
func (p Pins) Apply(g *Graph) error {
	if len(p.Shapes) == 0 && len(p.Dims) == 0 {
		return nil
	}
	dims, err := p.symbols(g)
	if err != nil {
		return err
	}
	for name, shape := range p.Shapes {
		v := g.values[name]
		v.Type.Shape, v.Type.Ranked = StaticShape(shape...), true
	}
	used := pinInputs(g, dims)
	// A symbol a subgraph's own inputs declare (a BeamSearch decoder's
	// past_seq_len) is pinned there when the subgraph is wrapped.
	subgraphSymbols(g.pb, used)
	for sym := range p.Dims {
		if !used[sym] {
			return badInput("--dim %s: no graph input has a dimension named %q", sym, sym)
		}
	}
	g.pinned = dims
	reinfer(g, dims)
	return nil
}

// symbols checks the shape pins against the inputs and returns every
// symbol pinned: the --dim ones and those a pinned input declares (an input
// declared (batch, seq) pinned to 2x16 gives batch 2 and seq 16), so the
// declared types of other values that use them become concrete too. One
// symbol is one size in ONNX, so two pins that disagree are refused.
func (p Pins) symbols(g *Graph) (map[string]int64, error) {
	dims := map[string]int64{}
	from := map[string]string{}
	for sym, x := range p.Dims {
		dims[sym], from[sym] = x, "--dim "+sym
	}
	names := make([]string, 0, len(p.Shapes))
	for name := range p.Shapes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		shape := p.Shapes[name]
		v := g.values[name]
		if v == nil || v.Kind != KindInput {
			return nil, badInput("--shape names %q, which is not a graph input", name)
		}
		if v.Type.Ranked && len(v.Type.Shape) != len(shape) {
			return nil, badInput("--shape %s: input has rank %d, got %d dims", name, len(v.Type.Shape), len(shape))
		}
		for i, d := range v.Type.Shape {
			if x, ok := d.Value(); ok && x != shape[i] {
				return nil, badInput("--shape %s: dim %d is %d in the model, got %d", name, i, x, shape[i])
			}
			if len(d.Syms) != 1 || d.C != 1 {
				continue
			}
			sym := d.Syms[0]
			if x, ok := dims[sym]; ok && x != shape[i] {
				return nil, badInput("--shape %s gives %s = %d, %s gives %d", name, sym, shape[i], from[sym], x)
			}
			dims[sym], from[sym] = shape[i], "--shape "+name
		}
	}
	return dims, nil
}

// pinInputs replaces the pinned symbols in g's input shapes and returns
// the symbols it found.
func pinInputs(g *Graph, dims map[string]int64) map[string]bool {
	used := map[string]bool{}
	for _, v := range g.Inputs {
		for i, d := range v.Type.Shape {
			if len(d.Syms) == 1 && d.C == 1 {
				if x, ok := dims[d.Syms[0]]; ok {
					v.Type.Shape[i] = D(x)
					used[d.Syms[0]] = true
				}
			}
		}
	}
	return used
}

// subgraphSymbols adds the symbols the inputs of gp's subgraphs declare,
// at any depth.
func subgraphSymbols(gp *onnxpb.GraphProto, into map[string]bool) {
	for _, n := range gp.GetNode() {
		for _, a := range n.GetAttribute() {
			for _, sub := range append([]*onnxpb.GraphProto{a.GetG()}, a.GetGraphs()...) {
				if sub == nil {
					continue
				}
				for _, vi := range sub.GetInput() {
					for _, d := range typeFromProto(vi.GetType()).Shape {
						if len(d.Syms) == 1 && d.C == 1 {
							into[d.Syms[0]] = true
						}
					}
				}
				subgraphSymbols(sub, into)
			}
		}
	}
}

// reinfer forgets what inference derived from the symbols and runs it
// again with dims pinned. The types the file declares (graph outputs and
// value_info) are taken again, pinned, as buildGraph takes them: inference
// keeps what they know where it knows less (an op it has no rule for), so
// a pinned run never knows less than the unpinned one.
func reinfer(g *Graph, dims map[string]int64) {
	declared := map[*Value]Type{}
	for _, vi := range g.valueInfo {
		if v := g.values[vi.GetName()]; v != nil && v.Kind == KindNode {
			declared[v] = mergeType(declared[v], pinType(typeFromProto(vi.GetType()), dims))
		}
	}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			o.Type = Type{}
			if n.OpType != "Constant" {
				o.Sym, o.Const = nil, nil
			}
			if o.info != nil {
				o.Type = pinType(typeFromProto(o.info.GetType()), dims)
			}
			if t, ok := declared[o]; ok {
				o.Type = mergeType(o.Type, t)
			}
		}
	}
	InferShapes(g)
}

func pinType(t Type, dims map[string]int64) Type {
	for i, d := range t.Shape {
		t.Shape[i] = pinDim(d, dims)
	}
	return t
}

// pinDim replaces the pinned symbols of d, in products ("4*batch") and in
// the terms of sums ("past+seq") alike.
func pinDim(d Dim, dims map[string]int64) Dim {
	if d.Unknown || d.Static() {
		return d
	}
	out := D(d.C)
	for _, s := range d.Syms {
		switch x, ok := dims[s]; {
		case ok:
			out = out.Mul(D(x))
		case strings.Contains(s, "+") && len(s) <= 256:
			sum := D(0)
			for _, t := range strings.Split(s, "+") {
				term, ok := dimExpr(t)
				if !ok {
					term = Sym(t)
				}
				sum = sum.Add(pinDim(term, dims))
			}
			out = out.Mul(sum)
		default:
			out = out.Mul(Sym(s))
		}
	}
	return out
}
