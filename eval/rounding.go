package eval

import "github.com/attnopt/attnopt/graph"

// The fp16/bf16 rounding rule. A half-precision runtime stores every
// fp16/bf16 tensor in that type, so each op that computes new values has
// its output rounded (Tensor.normalize). Every fp16/bf16 value the runtime
// holds is therefore already on that type's grid: fed inputs are rounded on
// entry (execute), initializers and constants are decoded from it, and
// computed outputs are rounded here. An op that only moves, selects or
// compares such values (a Reshape, a Gather, a Max) cannot leave the grid,
// so its output is not rounded again; this changes no result and skips a
// pass over the data.
var gridPreserving = map[string]bool{
	"Identity": true, "Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true,
	"Transpose": true, "Slice": true, "Gather": true, "GatherElements": true, "GatherND": true,
	"Concat": true, "Split": true, "Expand": true, "Tile": true, "Where": true,
	"DepthToSpace": true, "SpaceToDepth": true, "Relu": true, "Neg": true, "Abs": true,
	"Max": true, "Min": true, "MaxPool": true, "ReduceMax": true, "ReduceMin": true,
}

// roundOutput brings a node's output to its dtype's precision, skipping
// fp16/bf16 outputs of grid-preserving ops whose float inputs share the
// output's dtype (see gridPreserving).
func roundOutput(n *graph.Node, in []*Tensor, t *Tensor) *Tensor {
	if (t.DType == graph.Float16 || t.DType == graph.BFloat16) && graph.IsDefaultDomain(n.Domain) && gridPreserving[n.OpType] {
		same := true
		for _, x := range in {
			if x != nil && x.F != nil && x.DType != t.DType {
				same = false
			}
		}
		if same {
			return t
		}
	}
	return t.normalize()
}
