// Package schema states the fused attention ops attnopt reads and writes:
// the checked schema of each op a rewrite writes (fused.go), what ONNX
// Runtime refuses in the ops it lifts or runs (runtime.go), and their shape
// inference (infer.go). It is the lowest floor of passes/: every other
// package there may read it (passes/layers_test.go).
package schema

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
)

// Checked schemas of the fused ops rewrites write: each check reads the
// node's operand types and returns an error naming the value at fault. The
// rewrite runs them after every site with --verify-each and always before a
// model is written, so a lowering mistake is caught here, not in a runtime.
// The canonical op (passes/canonical) registers its own.
var fusedSchemas = map[string]func(n *graph.Node) error{
	"attnopt.FlashAttention":            checkFlash,
	"attnopt.WindowAttention":           checkFlash,
	"ai.onnx.Attention":                 checkONNXAttention,
	"com.microsoft.MultiHeadAttention":  checkPacked("num_heads", "num_heads", 5),
	"com.microsoft.GroupQueryAttention": checkPacked("num_heads", "kv_num_heads", -1),
}

// Register sets the checked schema of op ("domain.Op").
func Register(op string, check func(n *graph.Node) error) { fusedSchemas[op] = check }

// Registered reports whether op has a checked schema.
func Registered(op string) bool { return fusedSchemas[op] != nil }

// Flash is attnopt.FlashAttention's schema, which the canonical op and
// WindowAttention share (checkFlash).
func Flash(n *graph.Node) error { return checkFlash(n) }

// ONNXAttention is ai.onnx.Attention's schema.
func ONNXAttention(n *graph.Node) error { return checkONNXAttention(n) }

// Packed is the schema of a (B, S, H·D) contrib op (checkPacked).
func Packed(qAttr, kvAttr string, maskAt int) func(n *graph.Node) error {
	return checkPacked(qAttr, kvAttr, maskAt)
}

// ScaleProblem says why a site's scale cannot be a fused op's attribute:
// the ops (and ONNX Runtime's kernels for them) take a finite scale > 0,
// written as a float32; com.microsoft's read 0 as "the default".
func ScaleProblem(scale float64) string {
	if f := float32(scale); f > 0 && !math.IsInf(float64(f), 0) {
		return ""
	}
	return fmt.Sprintf("scale %g: the fused ops take a finite scale > 0", scale)
}

// OpName is "domain.Op" with ai.onnx for the default domain.
func OpName(n *graph.Node) string {
	return graph.DomainName(n.Domain) + "." + n.OpType
}

// CheckFusedOps runs the schema of every fused op in g.
func CheckFusedOps(g *graph.Graph) error {
	for _, n := range g.Nodes {
		if check := fusedSchemas[OpName(n)]; check != nil {
			if err := check(n); err != nil {
				return fmt.Errorf("%s %s: %w", OpName(n), n.Label(), err)
			}
		}
	}
	return nil
}

// sameDim fails only when both dims are known and differ.
func sameDim(a, b graph.Dim) bool {
	return a.Unknown || b.Unknown || a.Equal(b) || !a.Static() || !b.Static()
}

// qkv checks Q, K, V of one rank (3 or 4 when heads4) with one dtype, Q
// and K of one head size and K and V of one length.
func qkv(n *graph.Node, ranks ...int) (q, k, v graph.Shape, err error) {
	qv, kv, vv := n.Input(0), n.Input(1), n.Input(2)
	for _, x := range []*graph.Value{qv, kv, vv} {
		if x == nil {
			return nil, nil, nil, fmt.Errorf("missing Q, K or V")
		}
		if !x.Type.Ranked {
			return nil, nil, nil, nil // nothing to check yet
		}
	}
	r := qv.Type.Rank()
	ok := false
	for _, want := range ranks {
		ok = ok || r == want
	}
	if !ok || kv.Type.Rank() != r || vv.Type.Rank() != r {
		return nil, nil, nil, fmt.Errorf("%q, %q, %q have ranks %d, %d, %d (want equal, one of %v)", qv.Name, kv.Name, vv.Name, r, kv.Type.Rank(), vv.Type.Rank(), ranks)
	}
	for _, x := range []*graph.Value{kv, vv} {
		if x.Type.DType != qv.Type.DType && x.Type.DType != graph.Undefined && qv.Type.DType != graph.Undefined {
			return nil, nil, nil, fmt.Errorf("%q is %s, Q %q is %s", x.Name, x.Type.DType, qv.Name, qv.Type.DType)
		}
	}
	q, k, v = qv.Type.Shape, kv.Type.Shape, vv.Type.Shape
	if !sameDim(k[r-2], v[r-2]) {
		return nil, nil, nil, fmt.Errorf("K %q has %s keys, V %q has %s", kv.Name, k[r-2], vv.Name, v[r-2])
	}
	if !sameDim(q[0], k[0]) || !sameDim(q[0], v[0]) {
		return nil, nil, nil, fmt.Errorf("batch of Q %q (%s) differs from K/V (%s, %s)", qv.Name, q[0], k[0], v[0])
	}
	return q, k, v, nil
}

// checkFlash: a scale the kernels take, Q (…, Nq, Dqk), K (…, Nk, Dqk), V
// (…, Nk, Dv), Hq a multiple of Hkv, and a mask that broadcasts to (B, Hq,
// Nq, Nk).
func checkFlash(n *graph.Node) error {
	if err := checkKernelAttrs(n); err != nil {
		return err
	}
	q, k, _, err := qkv(n, 3, 4)
	if err != nil || q == nil {
		return err
	}
	r := len(q)
	if !sameDim(q[r-1], k[r-1]) {
		return fmt.Errorf("Q %q has head size %s, K %q %s", n.Input(0).Name, q[r-1], n.Input(1).Name, k[r-1])
	}
	if r == 4 {
		if hq, ok := q[1].Value(); ok {
			if hkv, ok := k[1].Value(); ok && (hkv == 0 || hq%hkv != 0) {
				return fmt.Errorf("%d query heads are not a multiple of K %q's %d", hq, n.Input(1).Name, hkv)
			}
		}
	}
	full := graph.Shape{q[0], graph.D(1), q[r-2], k[r-2]}
	if r == 4 {
		full[1] = q[1]
	}
	return checkMaskBroadcast(n.Input(3), full)
}

// The canonical ops (passes/canonical, a floor above) share these checks:
// SDPA FlashAttention's, WindowSDPA WindowAttention's.
const (
	canonicalDomain   = "attnopt.internal"
	canonicalWindowOp = "WindowSDPA"
)

// checkKernelAttrs: the attributes as the custom-op library reads them
// (kernels/src/ort/op_attrs.cpp), which refuses the model otherwise: the
// types, defaults and ranges of internal/opdef's table (docs/ops.md; a
// scale finite and > 0 as a float32, as ScaleProblem says), a scale on the
// canonical op (stage 1 always writes one), and WindowAttention's token
// count within 2^63 and equal to Q's. attnopt's own ops must also keep
// within the kernels' static limits (checkKernelLimits). A model holding
// such an op is refused on load too (runtime.go), before the Go runtime
// would compute with it.
func checkKernelAttrs(n *graph.Node) error {
	def := opdef.FlashAttention
	if n.OpType == opdef.WindowAttention.Name || n.OpType == canonicalWindowOp {
		def = opdef.WindowAttention
	}
	vs, err := def.Read(n)
	if err != nil {
		return err
	}
	if n.Domain == canonicalDomain && !vs.Has(opdef.AttrScale) {
		return fmt.Errorf("needs a FLOAT scale")
	}
	if n.Domain == opdef.Domain {
		if err := checkKernelLimits(n, def); err != nil {
			return err
		}
	}
	if def != opdef.WindowAttention {
		return nil
	}
	grid, win := vs.Ints(opdef.AttrSpatialShape), vs.Ints(opdef.AttrWindow)
	tokens := int64(1)
	for _, g := range grid {
		if tokens > math.MaxInt64/g {
			return fmt.Errorf("spatial_shape %v with window %v is not a grid of windows >= 1 within 2^63 tokens", grid, win)
		}
		tokens *= g
	}
	if q := n.Input(0); q != nil && q.Type.Ranked && len(q.Type.Shape) >= 2 {
		if d, ok := q.Type.Shape[len(q.Type.Shape)-2].Value(); ok && d != tokens {
			return fmt.Errorf("spatial_shape %v has %d tokens, Q %q %d", grid, tokens, q.Name, d)
		}
	}
	return nil
}

// checkKernelLimits: what the kernels refuse of an op's static types and
// shapes (internal/opdef): each input's element type and rank, and head
// sizes outside opdef.HeadDimMin..HeadDimMax. Symbolic dims pass; the
// library checks them at run time.
func checkKernelLimits(n *graph.Node, def *opdef.Op) error {
	for i, in := range def.Inputs {
		v := n.Input(i)
		if v == nil || !v.Type.Ranked {
			continue
		}
		if dt := v.Type.DType; dt != graph.Undefined && !in.Takes(dt) {
			return fmt.Errorf("%s %q is %s: %s takes %s", in.Name, v.Name, dt, def.Name, opdef.TypesText(in.Types))
		}
		if r := v.Type.Rank(); r < in.MinRank || r > in.MaxRank {
			return fmt.Errorf("%s %q has rank %d: %s takes %d..%d", in.Name, v.Name, r, def.Name, in.MinRank, in.MaxRank)
		}
	}
	for _, i := range []int{0, 2} { // Q's head size is K's (qkv checks it)
		if v := n.Input(i); v != nil && v.Type.Ranked && v.Type.Rank() > 0 {
			if d, ok := v.Type.Shape[v.Type.Rank()-1].Value(); ok && !opdef.HeadDimOK(d) {
				return fmt.Errorf("%s %q has head size %d: the kernels take %d..%d", def.Inputs[i].Name, v.Name, d, opdef.HeadDimMin, opdef.HeadDimMax)
			}
		}
	}
	return nil
}

// checkMaskBroadcast: every known dim of the mask, right-aligned against
// (B, H, Nq, Nk), is 1 or that dim.
func checkMaskBroadcast(m *graph.Value, full graph.Shape) error {
	if m == nil || !m.Type.Ranked {
		return nil
	}
	ms := m.Type.Shape
	if len(ms) > len(full) {
		return fmt.Errorf("mask %q has rank %d, over %d", m.Name, len(ms), len(full))
	}
	for i := range ms {
		d, f := ms[len(ms)-1-i], full[len(full)-1-i]
		if d.Static() && d.C == 1 {
			continue
		}
		if !sameDim(d, f) {
			return fmt.Errorf("mask %q %s does not broadcast to %s", m.Name, ms, full)
		}
	}
	return nil
}

// checkONNXAttention: rank 4, or rank 3 with q_num_heads/kv_num_heads that
// divide the hidden sizes; attn_mask broadcasts to (B, Hq, Nq, Nk).
func checkONNXAttention(n *graph.Node) error {
	q, k, _, err := qkv(n, 3, 4)
	if err != nil || q == nil {
		return err
	}
	if len(q) == 3 {
		return checkHeads(n, q, k, "q_num_heads", "kv_num_heads")
	}
	if !sameDim(q[3], k[3]) {
		return fmt.Errorf("Q %q has head size %s, K %q %s", n.Input(0).Name, q[3], n.Input(1).Name, k[3])
	}
	if n.Input(4) != nil {
		return nil // a cache lengthens the keys; the mask is checked against them at run time
	}
	return checkMaskBroadcast(n.Input(3), graph.Shape{q[0], q[1], q[2], k[2]})
}

// checkPacked: (B, S, H·D) operands whose hidden sizes split into the
// heads the attributes name; maskAt is an attention_bias input that must be
// (B|1, H|1, S, L) (ONNX Runtime broadcasts only its first two axes), -1
// when the op has none to check.
func checkPacked(qAttr, kvAttr string, maskAt int) func(n *graph.Node) error {
	return func(n *graph.Node) error {
		q, k, _, err := qkv(n, 3)
		if err != nil || q == nil {
			return err
		}
		if err := checkHeads(n, q, k, qAttr, kvAttr); err != nil {
			return err
		}
		if maskAt < 0 {
			return nil
		}
		b := n.Input(maskAt)
		if b == nil || !b.Type.Ranked {
			return nil
		}
		bs := b.Type.Shape
		if len(bs) != 4 || !sameDim(bs[2], q[1]) || !sameDim(bs[3], k[1]) {
			return fmt.Errorf("attention_bias %q is %s, not (B|1, H|1, %s, %s)", b.Name, bs, q[1], k[1])
		}
		return nil
	}
}

// checkHeads: the hidden sizes of rank-3 Q and K divide into the heads the
// attributes name, with one head size.
func checkHeads(n *graph.Node, q, k graph.Shape, qAttr, kvAttr string) error {
	hq, hkv := n.AttrInt(qAttr, 0), n.AttrInt(kvAttr, 0)
	if hq <= 0 || hkv <= 0 {
		return fmt.Errorf("%s/%s missing", qAttr, kvAttr)
	}
	if hq%hkv != 0 {
		return fmt.Errorf("%s %d is not a multiple of %s %d", qAttr, hq, kvAttr, hkv)
	}
	dq, ok1 := q[2].Div(graph.D(hq))
	dk, ok2 := k[2].Div(graph.D(hkv))
	if (q[2].Static() && !ok1) || (k[2].Static() && !ok2) || (ok1 && ok2 && !sameDim(dq, dk)) {
		return fmt.Errorf("hidden sizes %s (Q %q) and %s (K %q) do not split into %d and %d heads of one size", q[2], n.Input(0).Name, k[2], n.Input(1).Name, hq, hkv)
	}
	return nil
}
