package match

import (
	"strings"

	"github.com/attnopt/attnopt/graph"
)

// Einsum forms of the two products. The labels name the axes: the score
// product contracts Q's and K's head dim d and keeps the batch labels, the
// query label i and the key label j (the output's last two); the value
// product contracts P's key label with V's and keeps P's batch and query
// labels and V's value dim. Operands in another order than (…, N, D) — flax
// writes "...qhd,...khd->...hqk" and "...hqk,...khd->...qhd" on (B, N, H, D)
// tensors — get a perm in Match.Perm that stage 1 applies with Transpose.

// einsumTerms parses n's equation over its inputs' ranks.
func einsumTerms(n *graph.Node) (ins []string, out string, ok bool) {
	ranks := make([]int, len(n.Inputs))
	for i, x := range n.Inputs {
		ranks[i] = -1
		if x != nil && x.Type.Ranked {
			ranks[i] = x.Type.Rank()
		}
	}
	ins, out, err := graph.ParseEinsum(n.AttrString("equation", ""), ranks)
	return ins, out, err == nil
}

// permTo is the Transpose perm that reorders labels src into dst (nil when
// they are in order already); ok is false when src does not hold exactly
// dst's labels.
func permTo(src, dst string) (perm []int64, ok bool) {
	if len(src) != len(dst) {
		return nil, false
	}
	identity := true
	perm = make([]int64, len(dst))
	for i, r := range dst {
		at := strings.IndexRune(src, r)
		if at < 0 {
			return nil, false
		}
		perm[i] = int64(at)
		identity = identity && at == i
	}
	if identity {
		return nil, true
	}
	return perm, true
}

// contracted is the one label of a and b that out lacks.
func contracted(a, b, out string) (rune, bool) {
	var c rune
	n := 0
	for _, r := range a {
		if strings.ContainsRune(b, r) && !strings.ContainsRune(out, r) {
			c, n = r, n+1
		}
	}
	return c, n == 1
}

// matchQKEinsum: scores = einsum(Q, K) with out = batch·i·j.
func (m *matcher) matchQKEinsum(n *graph.Node, s *draft) *Reject {
	s.ScoreOp = "Einsum"
	eq := n.AttrString("equation", "")
	ins, out, ok := einsumTerms(n)
	if !ok || len(ins) != 2 {
		return reject(CodeProduct, n, "einsum %q is not a two-operand contraction", eq)
	}
	a, b := ins[0], ins[1]
	k := len(out)
	if k < 2 || len(a) != k || len(b) != k {
		return reject(CodeProduct, n, "einsum %q is not a batched Q·Kᵀ", eq)
	}
	d, ok := contracted(a, b, out)
	if !ok {
		return reject(CodeProduct, n, "einsum %q does not contract the head dim of Q and K", eq)
	}
	batch, i, j := out[:k-2], string(out[k-2]), string(out[k-1])
	qPerm, okQ := permTo(a, batch+i+string(d))
	if !okQ {
		return reject(CodeProduct, n, "einsum %q is not a batched Q·Kᵀ", eq)
	}
	switch kt := batch + string(d) + j; {
	case b == kt:
		s.KTransposed = true
	default:
		kPerm, okK := permTo(b, batch+j+string(d))
		if !okK {
			return reject(CodeProduct, n, "einsum %q is not a batched Q·Kᵀ", eq)
		}
		s.Perm.K = kPerm
	}
	s.Perm.Q = qPerm
	q, r := m.peelOperandScale(n.Input(0), s, ScaleOnQ)
	if r != nil {
		return r
	}
	kv, r := m.peelOperandScale(n.Input(1), s, ScaleOnK)
	if r != nil {
		return r
	}
	s.Q, s.K = q, kv
	return nil
}

// matchPVEinsum: out = einsum(P, V), P's labels batch·i·j in its natural
// order, V holding batch, j and the value dim.
func (m *matcher) matchPVEinsum(n *graph.Node, idx int, s *draft) *Reject {
	eq := n.AttrString("equation", "")
	ins, out, ok := einsumTerms(n)
	if !ok || len(ins) != 2 || idx != 0 {
		return reject(CodeProduct, n, "einsum %q is not P·V", eq)
	}
	a, b := ins[0], ins[1]
	k := len(a)
	if k < 2 || len(b) != k || len(out) != k {
		return reject(CodeProduct, n, "einsum %q is not a batched P·V", eq)
	}
	batch, i, j := a[:k-2], string(a[k-2]), a[k-1]
	if c, ok := contracted(a, b, out); !ok || c != rune(j) {
		return reject(CodeProduct, n, "einsum %q does not contract the key axis of P with V", eq)
	}
	var d string
	for _, r := range b {
		if !strings.ContainsRune(a, r) {
			d += string(r)
		}
	}
	if len(d) != 1 {
		return reject(CodeProduct, n, "einsum %q is not a batched P·V", eq)
	}
	vPerm, okV := permTo(b, batch+string(j)+d)
	outPerm, okO := permTo(batch+i+d, out)
	if !okV || !okO {
		return reject(CodeProduct, n, "einsum %q is not a batched P·V", eq)
	}
	s.Perm.V, s.Perm.Out = vPerm, outPerm
	s.V, s.Output = n.Input(1), n.Output(0)
	return nil
}
