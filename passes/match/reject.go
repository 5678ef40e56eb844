package match

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
)

// Code is why a candidate is not a site or a site is not fused, as a typed
// value: tests and tools ask the code, people read the reason.
type Code uint8

const (
	CodeNone Code = iota
	// The Softmax does not normalise the key axis alone.
	CodeSoftmaxAxis
	// A score or probability tensor is read outside the site, is a graph
	// output, or is read by nothing.
	CodeIntermediate
	// The candidate shares nodes with a site found before it.
	CodeOverlap
	// The scores pass through an op that is not a cast, scale, mask or
	// the Q·Kᵀ product, or are not computed from one.
	CodeScoreChain
	// The scale is not a constant the fused ops can take.
	CodeScale
	// A mask term has a type, rank, fill or form the fused ops cannot read.
	CodeMask
	// A second causal term, or a causal alignment the op cannot state.
	CodeCausal
	// A batch or head view of the scores that is not undone as it must be.
	CodeView
	// The probabilities do not reach a product with V, or an einsum is not
	// the contraction attention needs.
	CodeProduct
	// Q, K, V (or a cache) have ranks, sizes or types that do not describe
	// one attention.
	CodeShape
	// A fused op's attribute or input has no exact lift.
	CodeUnsupported
	// ONNX Runtime refuses the op as the model has it (passes/schema).
	CodeRuntime
	// The target cannot lower the canonical op (its type, heads, alignment,
	// a window its op has no attribute for).
	CodeTarget
	// The target cannot run the plan's op (an approximation only attnopt's
	// kernels compute).
	CodePlan
	// Stage 1 cannot build the site (an intermediate read elsewhere, a
	// symbolic view of a mask term).
	CodeBuild
	// A size the target's kernels refuse: a head size outside the limit of
	// internal/opdef's table (1..256).
	CodeLimit
)

var codeNames = [...]string{"", "softmax_axis", "intermediate", "overlap", "score_chain", "scale", "mask", "causal",
	"view", "product", "shape", "unsupported", "runtime", "target", "plan", "build", "limit"}

// String is the code's JSON spelling.
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// Reject says why a candidate is not a site, or a site not fused, and
// where: At names the node or value at fault, which Node or Value holds
// when the rule had it.
type Reject struct {
	Code    Code
	Softmax *graph.Node // the candidate: its Softmax, or the fused op
	At      string
	Node    *graph.Node
	Value   *graph.Value
	Reason  string
	// Err is the error the reason was made from, if any.
	Err error
}

func (r *Reject) Error() string { return r.At + ": " + r.Reason }

// Unwrap is the error the reason came from.
func (r *Reject) Unwrap() error { return r.Err }

// Rejectf is a Reject with the code, naming at (a *graph.Node, a
// *graph.Value or a name) as the fault.
func Rejectf(code Code, at any, format string, args ...any) *Reject {
	r := &Reject{Code: code, Reason: fmt.Sprintf(format, args...)}
	switch x := at.(type) {
	case *graph.Node:
		r.Node, r.At = x, x.Label()
	case *graph.Value:
		r.Value, r.At = x, x.Name
	case string:
		r.At = x
	}
	return r
}

func reject(code Code, at any, format string, args ...any) *Reject {
	return Rejectf(code, at, format, args...)
}
