package graph

import (
	"fmt"
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
	for name, dims := range p.Shapes {
		v := g.values[name]
		if v == nil || v.Kind != KindInput {
			return badInput("--shape names %q, which is not a graph input", name)
		}
		if v.Type.Ranked && len(v.Type.Shape) != len(dims) {
			return badInput("--shape %s: input has rank %d, got %d dims", name, len(v.Type.Shape), len(dims))
		}
		v.Type.Shape, v.Type.Ranked = StaticShape(dims...), true
	}
	used := pinInputs(g, p.Dims)
	// A symbol a subgraph's own inputs declare (a BeamSearch decoder's
	// past_seq_len) is pinned there when the subgraph is wrapped.
	subgraphSymbols(g.pb, used)
	for sym := range p.Dims {
		if !used[sym] {
			return badInput("--dim %s: no graph input has a dimension named %q", sym, sym)
		}
	}
	g.pinned = p.Dims
	reinfer(g, p.Dims)
	return nil
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
// again with dims pinned.
func reinfer(g *Graph, dims map[string]int64) {
	// Forget what the first inference derived from the symbols.
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != nil {
				o.Type = Type{}
				if n.OpType != "Constant" {
					o.Sym, o.Const = nil, nil
				}
				if o.info != nil {
					o.Type = typeFromProto(o.info.GetType())
					o.Type = pinType(o.Type, dims)
				}
			}
		}
	}
	InferShapes(g)
}

func pinType(t Type, dims map[string]int64) Type {
	for i, d := range t.Shape {
		if len(d.Syms) == 1 && d.C == 1 {
			if x, ok := dims[d.Syms[0]]; ok {
				t.Shape[i] = D(x)
			}
		}
	}
	return t
}
