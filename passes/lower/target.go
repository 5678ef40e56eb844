// Package lower is stage 2 of a rewrite: each target (one file each:
// attnopt.go, ort.go, onnx.go, gqa.go) accepts a canonical op with a
// reason when it cannot run it, and lowers it into its own fused op. The
// helpers its lowerings share state bands (mask.go), rows that see no key
// (rows.go, guard.go) and the CUDA kernel ONNX Runtime picks (cuda.go).
package lower

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/emit"
	"github.com/attnopt/attnopt/passes/match"
)

// Target is a fused op a site can be rewritten into.
type Target interface {
	// Name is the --target value.
	Name() string
	// Op is the fused op, "domain.Op".
	Op() string
	// Summary says in a few words what runs the op and which sites it
	// takes, for rewrite --help's list of targets.
	Summary() string
	// WindowOp is the op the window plan's canonical op lowers to, "" when
	// the target has none (Accept then refuses it).
	WindowOp() string
	// CheckModel refuses a model the target cannot serve at all.
	CheckModel(m *graph.Model) error
	// Accept says why the target cannot lower a canonical op (a
	// *match.Reject), or nil; stage 1 asks it for every site and leaves a
	// refused site as it was.
	Accept(o *canonical.SDPA) error
	// Lower emits the target's op for an accepted canonical op and returns
	// the value that stands for its output (passes/canonical/op.go states
	// the layout). Adapters it adds are cancelled by cleanup where they meet
	// stage 1's.
	Lower(e *emit.Emitter, o *canonical.SDPA) (*graph.Value, error)
	// Import is the opset import the fused op needs.
	Import() graph.Opset
	// Materialises says why the target's op still materialises the
	// B·H·Nq·Nk scores for this op in its runtime ("" when it does not):
	// rewrite then counts the site's memory as the scores and warns.
	Materialises(o *canonical.SDPA) string
	// OnCUDA is the kernel ONNX Runtime's CUDA execution provider runs for
	// the lowered op (cuda.go).
	OnCUDA(o *canonical.SDPA) CUDAPath
	// Owns says whether a node is one of the fused ops this target writes.
	Owns(n *graph.Node) bool
	// Lowers names the FlashAttention attributes (internal/opdef/ops.go)
	// whose values Lower carries into its op; Admit refuses a canonical op
	// that sets any other, so an attribute the table gains is refused by
	// every target that has not been taught it, never dropped.
	Lowers() []string
}

// Admit is t.Accept, then the attribute check Lowers states (after, so a
// target's own reason for an attribute it refuses comes first).
func Admit(t Target, o *canonical.SDPA) error {
	if err := t.Accept(o); err != nil {
		return err
	}
	if o.Windowed == nil {
		vs := o.Attrs.Values()
		for _, a := range opdef.FlashAttention.Attrs {
			if vs.Has(a.Name) && !slices.Contains(t.Lowers(), a.Name) {
				return match.Rejectf(match.CodeTarget, o.Node, "the site needs %s (docs/ops.md), which %s has no lowering for (use --target attnopt)", a.Name, t.Op())
			}
		}
	}
	return nil
}

var targets = map[string]Target{}

func registerTarget(t Target) { targets[t.Name()] = t }

// TargetByName returns the target for --target.
func TargetByName(name string) (Target, error) {
	if t, ok := targets[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown target %q (one of %s)", name, strings.Join(TargetNames(), ", "))
}

// TargetNames lists the targets.
func TargetNames() []string {
	var names []string
	for n := range targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TargetOwning names the target whose fused op n is ("" when none): how
// validate tells which target a rewritten model was made with.
func TargetOwning(n *graph.Node) string {
	for _, name := range TargetNames() {
		if targets[name].Owns(n) {
			return name
		}
	}
	return ""
}

// ModelError refuses a whole model for a target; the CLI exits 2 with it.
type ModelError struct {
	Msg string
	Err error // what refused it, when another error did
}

func (e *ModelError) Error() string { return e.Msg }

// Unwrap is the error that refused the model.
func (e *ModelError) Unwrap() error { return e.Err }

// staticDim returns a dim's value or an error naming it.
func staticDim(d graph.Dim, what string) (int64, error) {
	v, ok := d.Value()
	if !ok {
		return 0, fmt.Errorf("%s is %s, not a static size", what, d)
	}
	return v, nil
}

// refuseWindowed is the reason a target without a window op gives for the
// window plan's canonical op; nil for any other op.
func refuseWindowed(t Target, o *canonical.SDPA) error {
	if o.Windowed == nil || t.WindowOp() != "" {
		return nil
	}
	return match.Rejectf(match.CodePlan, o.Node, "the window plan computes attnopt.WindowAttention, which only attnopt's kernels run and %s has no lowering for (use --target attnopt, or --pool)", t.Op())
}

// softcapAttrs is the canonical softcap as ONNX's Attention and ORT's
// GroupQueryAttention spell theirs: a float "softcap", absent when 0.
func softcapAttrs(o *canonical.SDPA) []*graph.Attr {
	if o.Attrs.Softcap == 0 {
		return nil
	}
	return []*graph.Attr{graph.FloatAttr("softcap", o.Attrs.Softcap)}
}
