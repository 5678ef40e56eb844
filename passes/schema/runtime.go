package schema

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// What ONNX Runtime refuses in the ops attnopt lifts (lift.go,
// lift_msattention.go), in the searches that hold decoders with them, and
// (with attnopt's custom-op library) in attnopt's own fused ops:
// head counts against shapes, past shapes against K/V, weight rows against
// the input width, scale > 0, a search's subgraph arity. A model that breaks
// one does not run in ONNX Runtime; attnopt refuses it (exit 2, the node
// named) instead of lifting it into a fused op that runs, or writing a
// model that still does not load. Only static dims are compared: a symbolic
// one can still be right at run time.

// runtimeCheck validates one op as its runtime does before running it.
type runtimeCheck struct {
	domain, op string
	check      func(n *graph.Node) error
}

var runtimeChecks = []runtimeCheck{
	{"", "Attention", checkONNXAttentionOp},
	{"com.microsoft", "MultiHeadAttention", checkMHAOp},
	{"com.microsoft", "Attention", checkMSAttentionOp},
	{"com.microsoft", "BeamSearch", checkSearchArity},
	{"com.microsoft", "GreedySearch", checkSearchArity},
	{"com.microsoft", "Sampling", checkSearchArity},
	// attnopt's own ops, as the custom-op library reads them and with the
	// geometry it checks (fused.go's checkFlash: Q, K, V ranks, head sizes,
	// K/V lengths, Hq a multiple of Hkv, a mask that broadcasts).
	{"attnopt", "FlashAttention", checkFlash},
	{"attnopt", "WindowAttention", checkFlash},
}

// CheckRuntimeOp is n's runtime check, nil when it passes or has none.
func CheckRuntimeOp(n *graph.Node) error {
	d := graph.CanonicalDomain(n.Domain)
	for _, c := range runtimeChecks {
		if c.domain == d && c.op == n.OpType {
			if err := c.check(n); err != nil {
				return fmt.Errorf("node %q (%s): %w", n.Label(), OpName(n), err)
			}
		}
	}
	return nil
}

// differ: both dims known and not equal.
func differ(a, b graph.Dim) bool {
	x, ok1 := a.Value()
	y, ok2 := b.Value()
	return ok1 && ok2 && x != y
}

// attrKinds: each attribute present has its kind (ONNX Runtime refuses
// another; attnopt's readers would take it as absent).
func attrKinds(n *graph.Node, kinds map[string]graph.AttrKind) error {
	for _, a := range n.Attrs {
		if want, ok := kinds[a.Name]; ok && a.Kind != want {
			return fmt.Errorf("attribute %q is %s, not %s", a.Name, a.Kind, want)
		}
	}
	return nil
}

// shapeOf is v's shape when its rank is r, else nil.
func shapeOf(v *graph.Value, r int) graph.Shape {
	if v == nil || v.Type.Rank() != r {
		return nil
	}
	return v.Type.Shape
}

var onnxAttentionAttrs = map[string]graph.AttrKind{
	"scale": graph.AttrFloat, "is_causal": graph.AttrInt, "q_num_heads": graph.AttrInt, "kv_num_heads": graph.AttrInt,
	"softcap": graph.AttrFloat, "softmax_precision": graph.AttrInt, "qk_matmul_output_mode": graph.AttrInt,
}

// checkONNXAttentionOp: ONNX Runtime's Attention kernel (opset 23/24)
// refuses a scale <= 0 when it creates the kernel, and at run time heads
// that disagree with the shapes or a cache that does not extend K and V.
func checkONNXAttentionOp(n *graph.Node) error {
	if err := attrKinds(n, onnxAttentionAttrs); err != nil {
		return err
	}
	if a := n.Attr("scale"); a != nil && !(a.F > 0) && !math.IsNaN(float64(a.F)) {
		return fmt.Errorf("scale %g: ONNX Runtime takes a scale > 0 (or none, for 1/sqrt(head size))", a.F)
	}
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	if q == nil || k == nil || v == nil {
		return fmt.Errorf("Attention needs Q, K and V")
	}
	r := q.Type.Rank()
	if r < 0 || k.Type.Rank() < 0 || v.Type.Rank() < 0 {
		return nil
	}
	if (r != 3 && r != 4) || k.Type.Rank() != r || v.Type.Rank() != r {
		return fmt.Errorf("Q %q, K %q, V %q have ranks %d, %d, %d; Attention takes three of rank 3 or three of rank 4", q.Name, k.Name, v.Name, r, k.Type.Rank(), v.Type.Rank())
	}
	qs, ks, vs := q.Type.Shape, k.Type.Shape, v.Type.Shape
	if differ(qs[0], ks[0]) || differ(qs[0], vs[0]) {
		return fmt.Errorf("batch of Q %q (%s) differs from K %q (%s) or V %q (%s)", q.Name, qs[0], k.Name, ks[0], v.Name, vs[0])
	}
	hq, hkv := n.AttrInt("q_num_heads", 0), n.AttrInt("kv_num_heads", 0)
	var heads, kvHeads, head, vHead graph.Dim
	if r == 4 {
		switch {
		case hq > 0 && differ(graph.D(hq), qs[1]):
			return fmt.Errorf("q_num_heads %d, but Q %q has %s heads", hq, q.Name, qs[1])
		case hkv > 0 && (differ(graph.D(hkv), ks[1]) || differ(graph.D(hkv), vs[1])):
			return fmt.Errorf("kv_num_heads %d, but K %q has %s heads and V %q %s", hkv, k.Name, ks[1], v.Name, vs[1])
		case differ(ks[1], vs[1]):
			return fmt.Errorf("K %q has %s heads, V %q %s", k.Name, ks[1], v.Name, vs[1])
		case differ(qs[3], ks[3]):
			return fmt.Errorf("Q %q has head size %s, K %q %s", q.Name, qs[3], k.Name, ks[3])
		case differ(ks[2], vs[2]):
			return fmt.Errorf("K %q has %s keys, V %q %s", k.Name, ks[2], v.Name, vs[2])
		}
		heads, kvHeads, head, vHead = qs[1], ks[1], qs[3], vs[3]
	} else {
		if hq <= 0 || hkv <= 0 {
			return fmt.Errorf("rank-3 Attention needs q_num_heads and kv_num_heads > 0, has %d and %d", hq, hkv)
		}
		var ok bool
		if head, ok = qs[2].Div(graph.D(hq)); !ok && qs[2].Static() {
			return fmt.Errorf("Q %q hidden size %s is not a multiple of q_num_heads %d", q.Name, qs[2], hq)
		}
		if vHead, ok = vs[2].Div(graph.D(hkv)); !ok && vs[2].Static() {
			return fmt.Errorf("V %q hidden size %s is not a multiple of kv_num_heads %d", v.Name, vs[2], hkv)
		}
		if differ(ks[2], graph.D(hkv).Mul(head)) {
			return fmt.Errorf("K %q hidden size %s is not kv_num_heads %d x the head size %s", k.Name, ks[2], hkv, head)
		}
		if differ(ks[1], vs[1]) {
			return fmt.Errorf("K %q has %s keys, V %q %s", k.Name, ks[1], v.Name, vs[1])
		}
		heads, kvHeads = graph.D(hq), graph.D(hkv)
	}
	if x, ok := heads.Value(); ok {
		if y, ok := kvHeads.Value(); ok && (y <= 0 || x%y != 0) {
			return fmt.Errorf("%d query heads are not a multiple of %d key/value heads", x, y)
		}
	}
	return checkPast(n, qs[0], kvHeads, head, vHead)
}

// checkPast: past_key (B, Hkv, P, head size) and past_value (B, Hkv, P, V
// head size) together, as ONNX Runtime's Attention requires.
func checkPast(n *graph.Node, batch, kvHeads, head, vHead graph.Dim) error {
	pk, pv := n.Input(4), n.Input(5)
	if (pk == nil) != (pv == nil) {
		return fmt.Errorf("past_key and past_value must come together")
	}
	if pk == nil || !pk.Type.Ranked || !pv.Type.Ranked {
		return nil
	}
	if pk.Type.Rank() != 4 || pv.Type.Rank() != 4 {
		return fmt.Errorf("past_key %q and past_value %q have ranks %d and %d, not 4", pk.Name, pv.Name, pk.Type.Rank(), pv.Type.Rank())
	}
	for _, p := range []struct {
		x    *graph.Value
		last graph.Dim
	}{{pk, head}, {pv, vHead}} {
		s := p.x.Type.Shape
		switch {
		case differ(s[0], batch):
			return fmt.Errorf("%q has batch %s, Q %s", p.x.Name, s[0], batch)
		case differ(s[1], kvHeads):
			return fmt.Errorf("%q has %s heads, K and V %s", p.x.Name, s[1], kvHeads)
		case differ(s[3], p.last):
			return fmt.Errorf("%q has head size %s, not %s", p.x.Name, s[3], p.last)
		}
	}
	if differ(pk.Type.Shape[2], pv.Type.Shape[2]) {
		return fmt.Errorf("past_key %q holds %s keys, past_value %q %s", pk.Name, pk.Type.Shape[2], pv.Name, pv.Type.Shape[2])
	}
	return nil
}

var contribAttentionAttrs = map[string]graph.AttrKind{
	"num_heads": graph.AttrInt, "scale": graph.AttrFloat, "unidirectional": graph.AttrInt, "mask_filter_value": graph.AttrFloat,
	"qkv_hidden_sizes": graph.AttrInts, "do_rotary": graph.AttrInt, "past_present_share_buffer": graph.AttrInt,
}

// numHeads is the contrib ops' required num_heads (> 0).
func numHeads(n *graph.Node) (int64, error) {
	if err := attrKinds(n, contribAttentionAttrs); err != nil {
		return 0, err
	}
	h := n.AttrInt("num_heads", 0)
	if h <= 0 {
		return 0, fmt.Errorf("num_heads %d: ONNX Runtime needs num_heads > 0", h)
	}
	return h, nil
}

// checkMHAOp: separate (B, S, hidden) Q, K, V split into num_heads heads
// of one size (ONNX Runtime's MultiHeadAttention refuses other hidden
// sizes at run time). Packed or 4-D key forms are left to the runtime.
func checkMHAOp(n *graph.Node) error {
	h, err := numHeads(n)
	if err != nil {
		return err
	}
	q, k, v := shapeOf(n.Input(0), 3), shapeOf(n.Input(1), 3), shapeOf(n.Input(2), 3)
	if q == nil {
		return nil
	}
	if d, ok := q[2].Value(); ok && d%h != 0 {
		return fmt.Errorf("query %q hidden size %d is not a multiple of num_heads %d", n.Input(0).Name, d, h)
	}
	if k == nil || v == nil {
		return nil
	}
	switch {
	case differ(k[2], q[2]):
		return fmt.Errorf("key %q hidden size %s differs from the query's %s", n.Input(1).Name, k[2], q[2])
	case differ(q[0], k[0]) || differ(q[0], v[0]):
		return fmt.Errorf("batch of query %q (%s) differs from key/value (%s, %s)", n.Input(0).Name, q[0], k[0], v[0])
	case differ(k[1], v[1]):
		return fmt.Errorf("key %q has %s positions, value %q %s", n.Input(1).Name, k[1], n.Input(2).Name, v[1])
	}
	if d, ok := v[2].Value(); ok && d%h != 0 {
		return fmt.Errorf("value %q hidden size %d is not a multiple of num_heads %d", n.Input(2).Name, d, h)
	}
	return nil
}

// checkMSAttentionOp: com.microsoft.Attention's weights (D_in, Dq+Dk+Dv)
// multiply its input (B, S, D_in); qkv_hidden_sizes split the columns; Q's
// part splits into num_heads; the bias has one entry per column.
func checkMSAttentionOp(n *graph.Node) error {
	h, err := numHeads(n)
	if err != nil {
		return err
	}
	x, w := shapeOf(n.Input(0), 3), shapeOf(n.Input(1), 2)
	if n.Input(0) == nil || n.Input(1) == nil {
		return fmt.Errorf("Attention needs its input and weights")
	}
	if x == nil || w == nil {
		return nil
	}
	if differ(w[0], x[2]) {
		return fmt.Errorf("weights %q have %s rows, but input %q is %s wide", n.Input(1).Name, w[0], n.Input(0).Name, x[2])
	}
	cols, static := w[1].Value()
	qHidden := int64(-1)
	if hs := n.AttrInts("qkv_hidden_sizes"); len(hs) > 0 {
		if len(hs) != 3 || hs[0] <= 0 || hs[1] <= 0 || hs[2] <= 0 {
			return fmt.Errorf("qkv_hidden_sizes %v: want three sizes > 0", hs)
		}
		if static && hs[0]+hs[1]+hs[2] != cols {
			return fmt.Errorf("qkv_hidden_sizes %v do not add up to the weights' %d columns", hs, cols)
		}
		qHidden = hs[0]
	} else if static {
		if cols%3 != 0 {
			return fmt.Errorf("weights %q have %d columns, not three equal parts (no qkv_hidden_sizes)", n.Input(1).Name, cols)
		}
		qHidden = cols / 3
	}
	if qHidden > 0 && qHidden%h != 0 {
		return fmt.Errorf("hidden size %d is not a multiple of num_heads %d", qHidden, h)
	}
	if b := shapeOf(n.Input(2), 1); b != nil && differ(b[0], w[1]) {
		return fmt.Errorf("bias %q has %s entries, the weights %s columns", n.Input(2).Name, b[0], w[1])
	}
	return nil
}

// checkSearchArity: ONNX Runtime's BeamSearch, GreedySearch and Sampling
// refuse, when the session is created, a decoder without the inputs and
// outputs their model type feeds and reads (contrib_ops/cpu/transformers:
// GPT: logits and present_* out, two to four more inputs than outputs;
// T5 and Whisper: logits and present key/value pairs).
func checkSearchArity(n *graph.Node) error {
	dec := n.Attr("decoder")
	if dec == nil || dec.Kind != graph.AttrGraph || len(dec.GraphProtos()) != 1 {
		return fmt.Errorf("no decoder subgraph")
	}
	gp := dec.GraphProtos()[0]
	ins, outs := len(gp.GetInput()), len(gp.GetOutput())
	switch t := n.AttrInt("model_type", 0); t {
	case 0:
		if outs < 2 {
			return fmt.Errorf("decoder has %d output(s); a GPT search needs logits and at least one present state", outs)
		}
		if ins < outs+2 || ins > outs+4 {
			return fmt.Errorf("decoder has %d inputs for %d outputs; a GPT search needs 2 to 4 more inputs than outputs", ins, outs)
		}
	case 1, 2:
		if outs < 3 || (outs-1)%2 != 0 {
			return fmt.Errorf("decoder has %d output(s); model_type %d needs logits and present key/value pairs (1 + 2 x layers)", outs, t)
		}
		if enc := n.Attr("encoder"); enc == nil || enc.Kind != graph.AttrGraph {
			return fmt.Errorf("model_type %d without an encoder subgraph", t)
		}
	}
	return nil
}
