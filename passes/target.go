package passes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/emit"
)

// Target is a fused op a site can be rewritten into.
type Target interface {
	// Name is the --target value.
	Name() string
	// Op is the fused op, "domain.Op".
	Op() string
	// CheckModel refuses a model the target cannot serve at all.
	CheckModel(m *graph.Model) error
	// Accept says why the target cannot lower a canonical op, or nil;
	// stage 1 asks it for every site and leaves a refused site as it was.
	Accept(o *SDPA) error
	// Lower emits the target's op for an accepted canonical op and returns
	// the value that stands for its output (canonical.go states the
	// layout). Adapters it adds are cancelled by cleanup where they meet
	// stage 1's.
	Lower(e *emit.Emitter, o *SDPA) (*graph.Value, error)
	// Import is the opset import the fused op needs.
	Import() graph.Opset
	// Materialises says why the target's op still materialises the
	// B·H·Nq·Nk scores for this op in its runtime ("" when it does not):
	// rewrite then counts the site's memory as the scores and warns.
	Materialises(o *SDPA) string
	// OnCUDA is the kernel ONNX Runtime's CUDA execution provider runs for
	// the lowered op (cuda_path.go).
	OnCUDA(o *SDPA) CUDAPath
	// Owns says whether a node is one of the fused ops this target writes.
	Owns(n *graph.Node) bool
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
type ModelError struct{ Msg string }

func (e *ModelError) Error() string { return e.Msg }

// staticDim returns a dim's value or an error naming it.
func staticDim(d graph.Dim, what string) (int64, error) {
	v, ok := d.Value()
	if !ok {
		return 0, fmt.Errorf("%s is %s, not a static size", what, d)
	}
	return v, nil
}

// naturalQ returns Q as (…, Nq, Dqk).
func naturalQ(e *emit.Emitter, s *Site) *graph.Value {
	if s.PackedHeads {
		return splitHeads(e, s.Q, s.Heads)
	}
	return s.Q
}

// naturalK returns K as (…, Nk, Dqk), after the KV cache when there is one.
func naturalK(e *emit.Emitter, s *Site) *graph.Value {
	return naturalKV(e, s, s.K, s.KTransposed, s.PastK, 0)
}

// naturalV returns V as (…, Nk, Dv), after the KV cache when there is one.
func naturalV(e *emit.Emitter, s *Site) *graph.Value {
	return naturalKV(e, s, s.V, s.VChannelsFirst, s.PastV, 1)
}

// naturalKV puts K or V (x, its last two axes swapped when swapped) in
// (…, N, D) order behind its cache and records it as present output i.
func naturalKV(e *emit.Emitter, s *Site, x *graph.Value, swapped bool, past *graph.Value, i int) *graph.Value {
	switch {
	case swapped:
		x = e.SwapLast2(x)
	case s.PackedHeads:
		x = splitHeads(e, x, s.KVHeads)
	}
	x = appendCache(e, past, x)
	s.present[i] = x
	return x
}

// splitHeads is the adapter (B, N, H·D) → (B, H, N, D); cleanup cancels it
// against a target that merges heads again (MultiHeadAttention).
func splitHeads(e *emit.Emitter, x *graph.Value, heads graph.Dim) *graph.Value {
	h, _ := heads.Value()
	return e.Transpose(e.Reshape(x, 0, 0, h, -1), 0, 2, 1, 3)
}

// appendCache concatenates a KV cache (B, Hkv, P, D) before x on the key axis.
func appendCache(e *emit.Emitter, past, x *graph.Value) *graph.Value {
	if past == nil {
		return x
	}
	return e.Op("Concat", "", []*graph.Value{past, x}, graph.IntAttr("axis", 2))
}

// restoreOutput turns a (…, Nq, Dv) result into the site's output layout.
func restoreOutput(e *emit.Emitter, s *Site, out *graph.Value) *graph.Value {
	switch {
	case s.VChannelsFirst:
		out = e.SwapLast2(out)
	case s.PackedHeads:
		out = e.Reshape(e.Transpose(out, 0, 2, 1, 3), 0, 0, -1)
	}
	if want := s.Output.Type.DType; want != graph.Undefined && want != out.Type.DType {
		out = e.Op("Cast", "", []*graph.Value{out}, graph.IntAttr("to", int64(want)))
	}
	return out
}
