package plan

import (
	"fmt"
	"github.com/attnopt/attnopt/internal/units"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match"
)

// Grid is the spatial layout of a site's tokens, recovered by tracing the
// Reshape or Flatten that turned a spatial tensor into tokens.
type Grid struct {
	Dims  []int64 // D,H,W or H,W (row-major token order)
	Order string  // channels_last (B,D,H,W,C → B,N,C) or channels_first (B,C,H,W → B,C,N)
	// Source is the spatial tensor the queries come from; KVSource the one
	// that feeds K and V (nil when K/V are not spatial, e.g. text tokens).
	Source, KVSource *graph.Value
	// Proven is false when an op between the spatial tensor and Q could
	// reorder tokens; approximations then need --grid.
	Proven bool
	Reason string
}

func (g *Grid) String() string {
	if g == nil {
		return ""
	}
	return units.FormatDims(g.Dims)
}

// Tokens is the number of grid cells.
func (g *Grid) Tokens() int64 {
	n := int64(1)
	for _, d := range g.Dims {
		n *= d
	}
	return n
}

// tokenwise ops keep each token where it is (they act along the channel
// axis, elementwise, or move whole axes); a path of them from a spatial
// tensor to Q proves the grid.
var tokenwise = map[string]bool{
	"MatMul": true, "Gemm": true, "Add": true, "Sub": true, "Mul": true, "Div": true,
	"Transpose": true, "Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true,
	"LayerNormalization": true, "Cast": true, "Identity": true, "Relu": true, "Gelu": true,
	"Erf": true, "Sigmoid": true, "Tanh": true, "Pow": true, "Sqrt": true, "ReduceMean": true,
	"Conv": true, "GroupNormalization": true, "InstanceNormalization": true, "BatchNormalization": true,
	"Split": true, "Slice": true, "Gather": true, "Einsum": true, "Softplus": true, "HardSigmoid": true, "Neg": true,
}

// RecoverGrid traces Q (and K) back to the spatial tensors they come from.
func RecoverGrid(s *match.Match) *Grid {
	n, ok := s.QLen.Value()
	if !ok {
		return nil
	}
	g := traceGrid(s.Q, n)
	if g == nil {
		return nil
	}
	if nk, ok := s.KVLen.Value(); ok {
		k := s.K
		if kg := traceGrid(k, nk); kg != nil && nk == n {
			g.KVSource = kg.Source
			if !kg.Proven {
				g.Proven, g.Reason = false, kg.Reason
			}
		}
	}
	return g
}

// traceGrid searches back from v, breadth first, for a Reshape or Flatten
// whose input has spatial dims multiplying to n.
func traceGrid(v *graph.Value, n int64) *Grid {
	type item struct {
		v      *graph.Value
		proven bool
		why    string
	}
	seen := map[*graph.Value]bool{v: true}
	queue := []item{{v, true, ""}}
	for steps := 0; len(queue) > 0 && steps < 4000; steps++ {
		it := queue[0]
		queue = queue[1:]
		p := it.v.Producer()
		if p == nil {
			continue
		}
		if p.Is("Reshape") || p.Is("Flatten") {
			if g := spatialGrid(p.Input(0), n); g != nil {
				g.Proven, g.Reason = it.proven, it.why
				return g
			}
		}
		if p.Is("Softmax") || p.Is("Concat") {
			// Another attention or a token concatenation (a CLS token)
			// lies between: the tokens are not the grid's any more.
			continue
		}
		proven, why := it.proven, it.why
		if proven && !tokenwise[p.OpType] {
			proven, why = false, fmt.Sprintf("%s node %q may reorder tokens", p.OpType, p.Label())
		}
		for _, in := range p.Inputs {
			if in == nil || in.Kind == graph.KindInit || in.Const != nil || seen[in] || !in.Type.DType.IsFloat() {
				continue
			}
			seen[in] = true
			queue = append(queue, item{in, proven, why})
		}
	}
	return nil
}

// spatialGrid reads (B…, S…, C) or (B, C, S…) where the spatial dims S are
// a run of at least two dims > 1 multiplying to n; dims before the run are
// batch (a window partition folds window indices there, as Swin does).
func spatialGrid(x *graph.Value, n int64) *Grid {
	dims, ok := x.Type.Shape.Ints()
	if !ok || len(dims) < 4 {
		return nil
	}
	r := len(dims)
	run := func(lo, hi int) bool {
		if hi-lo < 2 {
			return false
		}
		p := int64(1)
		for _, d := range dims[lo:hi] {
			if d < 2 {
				return false
			}
			p *= d
		}
		return p == n
	}
	fromConv := x.Producer() != nil && (x.Producer().Is("Conv") || x.Producer().Is("Add") && convBias(x.Producer()))
	if run(2, r) && (fromConv || !run(1, r-1)) {
		return &Grid{Dims: append([]int64(nil), dims[2:]...), Order: "channels_first", Source: x}
	}
	for lo := 1; lo <= r-3; lo++ {
		if run(lo, r-1) {
			return &Grid{Dims: append([]int64(nil), dims[lo:r-1]...), Order: "channels_last", Source: x}
		}
	}
	return nil
}

func convBias(add *graph.Node) bool {
	for _, in := range add.Inputs {
		if in != nil && in.Producer() != nil && in.Producer().Is("Conv") {
			return true
		}
	}
	return false
}
