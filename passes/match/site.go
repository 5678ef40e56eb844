// Package match finds attention sites in a graph. Its rule set (rules.go
// and the tables of each pattern family: scores.go, mask.go, output.go,
// gqa.go, and fused.go for attention ops an exporter already fused) checks
// a candidate and binds what the site computes into a Match, without
// emitting a node: the rewrites live on the floors above
// (passes/canonical builds the canonical op from a Match). Every check that
// refuses a candidate returns a Reject with a code and the node or value at
// fault.
package match

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
	"github.com/attnopt/attnopt/passes/match/resolve"
)

// Match is one attention site softmax(Q·Kᵀ·scale + mask)·V: the bindings
// the rule set found, typed. It is immutable once Find returns it: no code
// outside this package writes into one (readonly_test.go type-checks every
// package that imports the passes); stage 1 reads it and keeps its own
// state (passes/canonical/stage1.go), and a packed site's operands come as a
// copy (Materialised).
// docs/canonical-op.md shows two, a SAGAN site and a Mistral window site.
type Match struct {
	ID int
	// Path is the subgraph the site lives in, outermost first ("If n/then_branch"
	// / "Loop l/body"); "" for the main graph (nested.go).
	Path  string
	Nodes []*graph.Node // every node the rewrite replaces, in graph order

	Q *graph.Value // (…, Nq, Dqk), before any scale the site applies
	// K is the right operand of the score product after peeling the scale:
	// (…, Dqk, Nk) when KTransposed (MatMul(Q, Kᵀ)), else (…, Nk, Dqk).
	// Stage 1 derives K's natural layout from it.
	K           *graph.Value
	KTransposed bool
	// V is (…, Nk, Dv); VChannelsFirst marks the SAGAN form out = V·Aᵀ
	// where V is (…, Dv, Nk) and the output (…, Dv, Nq).
	V              *graph.Value
	VChannelsFirst bool
	Output         *graph.Value
	// Repeated holds K and V as the graph repeats them to every query head
	// when K and V above are the un-repeated (B, Hkv, N, D) sources
	// (grouped-query attention, gqa.go); K is then natural.
	Repeated *RepeatedKV

	Scale     float64
	ScaleForm ScaleForm // ScalePerHead is set when QScales is
	// Softcap c > 0 caps the scaled scores before the mask: c·tanh(s/c)
	// (Gemma 2, softcap.go; ONNX Attention's softcap); 0 = none.
	Softcap float64
	// QScales are tensors the scores are multiplied (or divided) by that
	// broadcast over the query and key axes (a per-head logit scale): stage
	// 1 applies them to Q, which is exact (qscale.go).
	QScales []QScale

	// Masks are the mask terms, the one statement of the site's mask; Mask
	// and MaskValue summarise them. Causal and SlidingWindow are not terms:
	// the canonical op states them as attributes.
	Masks  []masks.Term
	Causal bool
	// SlidingWindow is the number of keys each query sees when a causal site
	// also has a band mask term (Mistral's sliding window), 0 without one.
	SlidingWindow int64
	// Fills are what the source adds to dropped keys, and Rows what a row
	// that sees no key therefore yields (passes/match/masks).
	Fills masks.Fills
	Rows  masks.Rows
	// ZeroRowGuard marks a Where after the softmax that zeroes fully masked
	// rows; the fused ops do that themselves.
	ZeroRowGuard bool

	ScoreOp   string // MatMul or Einsum
	Softmax   *graph.Node
	SoftCasts bool // Cast to float32 around the softmax (fp16/bf16 models)
	Rank      int

	// Shapes; heads folded into the batch of a rank-3 bmm are recovered
	// when a Reshape shows them.
	Batch, Heads, KVHeads, QLen, KVLen, HeadDim, VHeadDim graph.Dim
	DType                                                 graph.DType
	// Variant names the forms matched, for people; tools read the typed
	// fields above.
	Variant string

	// Lifted is the already-fused op this site was lifted from (fused.go);
	// nil for a matched pattern. Softmax then names that op too.
	Lifted *graph.Node
	// PackedHeads marks Q, K, V and the output as (B, N, H·D), split into
	// Heads (KVHeads) by stage 1's adapters; the site is otherwise rank 4.
	PackedHeads bool
	// Perm orders the operands of an Einsum site written in another layout
	// than (…, N, D) (flax's "...qhd,...khd->...hqk", einsum.go); nil
	// entries are natural.
	Perm AxisPerms
	// KVBroadcast marks K and V (or one of them) as having fewer axes than
	// Q: learned memory tokens or latents that MatMul broadcasts over Q's
	// leading axes (shapes.go). Stage 1 expands them to Q's leading dims,
	// so the fused op reads the same keys for every batch and head.
	KVBroadcast bool
	// PastK/PastV are a KV cache (B, Hkv, P, D) the keys and values are
	// appended to on the key axis; WantPresent says the concatenation is
	// read (ONNX Attention's present_key/present_value).
	PastK, PastV *graph.Value
	WantPresent  bool
	// StackedPresent: the op has one present output stacking K and V
	// (com.microsoft.Attention), not two.
	StackedPresent bool
	// Packed is com.microsoft.Attention's projection: Q, K, V, PastK, PastV
	// and its mask_index term are typed placeholders outside the graph
	// until stage 1 emits the projection (fused_msattention.go).
	Packed *PackedQKV
}

// AxisPerms are the Transpose perms that bring Q, K and V to (…, N, D),
// and the one that brings the natural output (…, Nq, Dv) to the site's.
type AxisPerms struct{ Q, K, V, Out []int64 }

// Any says some operand is not in its natural layout.
func (p AxisPerms) Any() bool { return p.Q != nil || p.K != nil || p.V != nil || p.Out != nil }

// Mask is none, the kind of a single term, or additive when several terms
// must be combined into one bias.
func (s *Match) Mask() masks.Kind {
	switch len(s.Masks) {
	case 0:
		return masks.None
	case 1:
		return s.Masks[0].Kind
	}
	return masks.Additive
}

// MaskValue is the first term's tensor, nil without a mask.
func (s *Match) MaskValue() *graph.Value {
	if len(s.Masks) == 0 {
		return nil
	}
	return s.Masks[0].Value
}

// RepeatedKV is K and V as a site read them before its head repeat was
// looked through.
type RepeatedKV struct {
	K           *graph.Value
	KTransposed bool
	V           *graph.Value
}

// QScale is one per-head or per-batch factor of the scores.
type QScale struct {
	Value *graph.Value // broadcasts to Q with size-1 query and key axes
	Div   bool         // the scores are divided by Value
	// Mask terms peeled before this factor (walking back from the softmax):
	// terms found after it would be scaled by it.
	masksAfter int
}

// draft is a Match while the rules bind it, with the scratch the rules
// share; only draft.done hands out the Match.
type draft struct {
	Match
	maskForm   masks.Form         // the form the variant names: the first mask statement's
	extra      []*graph.Node      // operand-scale nodes peeled off Q or Kᵀ
	causal     resolve.Candidates // triangular terms and the band, resolved once the lengths are known (fixups.go)
	biasInputs []*graph.Value     // tensors added to the scores, as the graph has them
	headView   []graph.Dim        // (B, H) of the view of bmm scores the softmax ran in, until P·V leaves it (headview.go)
	window     *windowView        // Swin's view of the scores while the score chain walks through it (scores.go)
	packedKeep *maskIndexRule     // the form of Packed's mask_index
}

// done states the rows and hands out the Match; the draft is not used
// again.
func (s *draft) done() *Match {
	s.Rows = resolve.Rows(s.resolveSite())
	m := s.Match
	return &m
}

// ScoreBytes is B·H·Nq·Nk·e, the size of one materialised score tensor.
func (s *Match) ScoreBytes() (int64, bool) {
	e := int64(s.DType.Bits() / 8)
	return prodDims(s.Batch, s.Heads, s.QLen, s.KVLen, graph.D(e))
}

// IOBytes is Q, K, V and O: the tensors both graphs hold, the original
// and the rewrite alike (docs/design.md §6).
func (s *Match) IOBytes() (int64, bool) {
	e := graph.D(int64(s.DType.Bits() / 8))
	return sumDims(
		[]graph.Dim{e, s.Batch, s.Heads, s.QLen, s.HeadDim},
		[]graph.Dim{e, s.Batch, s.KVHeads, s.KVLen, s.HeadDim},
		[]graph.Dim{e, s.Batch, s.KVHeads, s.KVLen, s.VHeadDim},
		[]graph.Dim{e, s.Batch, s.Heads, s.QLen, s.VHeadDim})
}

// FootprintBytes is what a fused op holds in all: Q, K, V, O and a
// float32 row statistic per query. rewrite's --memory-budget judges it,
// since pooling K and V is what shrinks it (passes/plan).
func (s *Match) FootprintBytes() (int64, bool) {
	io, ok := s.IOBytes()
	if !ok {
		return 0, false
	}
	stats, ok := prodDims(graph.D(4), s.Batch, s.Heads, s.QLen)
	if !ok || io+stats < io {
		return 0, false
	}
	return io + stats, true
}

// CPU kernel constants (kernels/src/cpu/attention_core.h, attention_core.cpp).
const (
	cpuBlockQ       = 256      // query rows per work item
	cpuBlockK       = 64       // keys per tile
	cpuPackedBudget = 64 << 20 // bytes of packed tiles a call keeps at most
)

// FusedBytes is what attnopt's fused op adds beyond its inputs and output
// (docs/design.md §6): on the CPU, the float32 K and V tiles a worker
// thread packs once and keeps when several chunks of a kv head's queries
// read them, at most 64 MiB; nothing otherwise. The chunks are the CPU
// kernel's (plan in kernels/src/cpu/flash_attention.cpp): a chunk holds 256
// query rows, or several query heads of a GQA group when the rows are few.
// The per-thread tile buffer every call reuses (at most about 0.5 MiB) is
// not counted, and the CUDA kernels add nothing. Per worker thread;
// unknown while a length is symbolic.
func (s *Match) FusedBytes() (int64, bool) {
	nq, okQ := s.QLen.Value()
	heads, okH := s.Heads.Value()
	kvHeads, okK := s.KVHeads.Value()
	if !okQ || !okH || !okK || kvHeads <= 0 {
		return 0, false
	}
	group, perChunk, qchunks := heads/kvHeads, int64(1), (nq+cpuBlockQ-1)/cpuBlockQ
	if 2*nq <= cpuBlockQ {
		perChunk, qchunks = max(min(group, cpuBlockQ/max(nq, 1)), 1), 1
	}
	if (group+perChunk-1)/perChunk*qchunks <= 1 {
		return 0, true // one chunk per kv head: its tiles are packed as they are read
	}
	nk, ok1 := s.KVLen.Value()
	dqk, ok2 := s.HeadDim.Value()
	dv, ok3 := s.VHeadDim.Value()
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	tiles := (nk + cpuBlockK - 1) / cpuBlockK
	b, ok := prodDims(graph.D(4*cpuBlockK), graph.D(tiles), graph.D(dqk+dv))
	if !ok {
		return 0, false
	}
	return min(b, cpuPackedBudget), true
}

// sumDims is the sum of the products of each list of dims.
func sumDims(terms ...[]graph.Dim) (int64, bool) {
	var total int64
	for _, t := range terms {
		v, ok := prodDims(t...)
		if !ok || total+v < total {
			return 0, false
		}
		total += v
	}
	return total, true
}

func prodDims(ds ...graph.Dim) (int64, bool) {
	p := graph.D(1)
	for _, d := range ds {
		p = p.Mul(d)
	}
	return p.Value()
}

// fusedOps are the ops that already compute attention without an N² tensor
// in the graph, keyed by domain then op type.
var fusedOps = map[string]map[string]bool{
	"":              {"Attention": true},
	"com.microsoft": {"Attention": true, "MultiHeadAttention": true, "GroupQueryAttention": true, "PackedAttention": true, "PackedMultiHeadAttention": true, "DecoderMaskedMultiHeadAttention": true, "DecoderMaskedSelfAttention": true, "DecoderAttention": true, "SparseAttention": true, "PagedAttention": true, "QAttention": true, "LongformerAttention": true},
	"attnopt":       {"FlashAttention": true, "WindowAttention": true},
}

// IsFusedAttention reports whether n is an already-fused attention op.
func IsFusedAttention(n *graph.Node) bool {
	return fusedOps[graph.CanonicalDomain(n.Domain)][n.OpType]
}
