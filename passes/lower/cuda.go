package lower

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/match"
	"github.com/attnopt/attnopt/passes/match/masks"
)

// CUDAKernel is the attention kernel ONNX Runtime's CUDA execution provider
// runs for a fused op (docs/gpu.md, "Memory on ORT's CUDA EP").
type CUDAKernel int

const (
	// CUDAAttnopt: attnopt's own kernels, from the custom-op library.
	CUDAAttnopt CUDAKernel = iota
	// CUDAFlash: ORT's FlashAttention-2 kernel (O(N) memory).
	CUDAFlash
	// CUDAMemoryEfficient: ORT's CUTLASS memory-efficient kernel (O(N)).
	CUDAMemoryEfficient
	// CUDAUnfused: ORT's unfused path, which materialises the scores.
	CUDAUnfused
	// CUDANoKernel: ORT has no CUDA kernel for the op in this type; the
	// node runs on the CPU execution provider, with copies around it.
	CUDANoKernel
)

func (k CUDAKernel) String() string {
	switch k {
	case CUDAAttnopt:
		return "attnopt"
	case CUDAFlash:
		return "flash"
	case CUDAMemoryEfficient:
		return "memory-efficient"
	case CUDAUnfused:
		return "unfused"
	}
	return "cpu-fallback"
}

// MemoryEfficient says whether the kernel runs without the B·H·Nq·Nk scores.
func (k CUDAKernel) MemoryEfficient() bool {
	return k == CUDAAttnopt || k == CUDAFlash || k == CUDAMemoryEfficient
}

// CUDAPath is a kernel and why ONNX Runtime picks it.
type CUDAPath struct {
	Kernel CUDAKernel
	Why    string
	// AtRunTime: the choice reads a dim that is symbolic here (a sequence
	// length, a head dim), so ORT makes it per run; Kernel is the one it
	// takes when that dim fails the rule, and Why says which dim.
	AtRunTime bool
}

// CUDACase is what ORT's CUDA kernel choice reads from an attention op.
type CUDACase struct {
	DType           graph.DType
	Dqk, Dv, Nq, Nk graph.Dim
	// Masked: the lowered op has a mask or bias input (a sliding window
	// becomes a band mask for ORT's ops).
	Masked bool
	GQA    bool // fewer key/value heads than query heads
}

// cudaCaseOf reads a canonical op.
func cudaCaseOf(o *canonical.SDPA) CUDACase {
	return CUDACase{DType: o.DType(), Dqk: o.HeadDim(), Dv: o.VHeadDim(), Nq: o.QLen(), Nk: o.KVLen(),
		Masked: o.Mask != nil || o.Attrs.SlidingWindow > 0, GQA: !o.Heads().Equal(o.KVHeads())}
}

// CUDACaseOfSite reads a matched site, before any rewrite.
func CUDACaseOfSite(s *match.Match) CUDACase {
	return CUDACase{DType: s.DType, Dqk: s.HeadDim, Dv: s.VHeadDim, Nq: s.QLen, Nk: s.KVLen,
		Masked: s.Mask() != masks.None || s.SlidingWindow > 0, GQA: !s.Heads.Equal(s.KVHeads)}
}

// multipleOf8 is ORT's head-size rule for its fused kernels (flash and
// CUTLASS both read head rows in 8-element vectors); max bounds it.
func multipleOf8(d graph.Dim, max int64) (string, bool) {
	v, ok := d.Value()
	switch {
	case !ok:
		return fmt.Sprintf("head dim %s is symbolic (it must be a multiple of 8)", d), false
	case v%8 != 0:
		return fmt.Sprintf("head dim %d is not a multiple of 8", v), false
	case v > max:
		return fmt.Sprintf("head dim %d is over %d", v, max), false
	}
	return "", true
}

func divisible(d graph.Dim, n int64) bool {
	v, ok := d.Value()
	return ok && v%n == 0
}

// flashHeads: Flash needs Dqk = Dv, a multiple of 8, at most 256 (sm_80+).
func flashHeads(c CUDACase) (string, bool) {
	if !c.Dqk.Equal(c.Dv) {
		return fmt.Sprintf("Dqk %s != Dv %s", c.Dqk, c.Dv), false
	}
	return multipleOf8(c.Dqk, 256)
}

// memEffHeads: CUTLASS needs both head dims multiples of 8, at most 1024.
func memEffHeads(c CUDACase) (string, bool) {
	if why, ok := multipleOf8(c.Dqk, 1024); !ok {
		return why, false
	}
	if why, ok := multipleOf8(c.Dv, 1024); !ok {
		return "V's " + why, false
	}
	return "", true
}

// mhaOnCUDA is com.microsoft.MultiHeadAttention's choice (ORT
// contrib_ops/cuda/bert/multihead_attention.cc, 1.24-1.31): Flash for
// float16 without a bias, else CUTLASS when the heads allow and an
// attention_bias has a query length that is a multiple of 4·sizeof(T), else
// unfused. float32 takes CUTLASS only from 256 tokens on (shorter scores are
// small anyway; they are named unfused here).
func mhaOnCUDA(c CUDACase) CUDAPath {
	elem := int64(4)
	if c.DType == graph.Float16 {
		elem = 2
		if _, ok := flashHeads(c); ok && !c.Masked {
			return CUDAPath{Kernel: CUDAFlash, Why: "float16, no mask, head dim a multiple of 8 (sm_80+)"}
		}
	}
	why, ok := memEffHeads(c)
	switch {
	case !ok:
		return unfused(why, "head dim", c.Dqk, c.Dv)
	case c.Masked && !divisible(c.Nq, 4*elem):
		return unfused(fmt.Sprintf("an attention_bias needs the query length %s to be a multiple of %d", c.Nq, 4*elem), "length", c.Nq)
	case c.DType == graph.Float32 && !atLeast(c.Nq, 256) && !atLeast(c.Nk, 256):
		if static(c.Nq) && static(c.Nk) {
			return unfused("float32 sequences shorter than 256 tokens", "")
		}
		return unfused(fmt.Sprintf("float32 takes the memory-efficient kernel only from 256 tokens on, and the length %s is symbolic", symbolic(c.Nq, c.Nk)), "length", c.Nq, c.Nk)
	}
	return CUDAPath{Kernel: CUDAMemoryEfficient, Why: "head dims multiples of 8"}
}

// unfused is ORT's unfused path for why. When a dim the rule reads (the
// length or head dim, named by what) is symbolic, ORT decides per run and
// the reason says so rather than state the path as a fact.
func unfused(why, what string, read ...graph.Dim) CUDAPath {
	p := CUDAPath{Kernel: CUDAUnfused, Why: why}
	for _, d := range read {
		p.AtRunTime = p.AtRunTime || !static(d)
	}
	if p.AtRunTime {
		p.Why += ": it depends on the " + what + " at run time (pin it with --dim to know)"
	}
	return p
}

func static(d graph.Dim) bool {
	_, ok := d.Value()
	return ok
}

// symbolic is the first of dims that is not static.
func symbolic(dims ...graph.Dim) graph.Dim {
	for _, d := range dims {
		if !static(d) {
			return d
		}
	}
	return dims[0]
}

// attentionOnCUDA is ONNX Attention-23's choice (ORT core/providers/cuda/
// llm/attention.cc): Flash for float16/bfloat16 without a mask, else CUTLASS
// when the heads allow (not float32 with grouped heads; a mask needs Nk a
// multiple of 4), else unfused. No float64 kernel on CUDA.
func attentionOnCUDA(c CUDACase) CUDAPath {
	if c.DType == graph.Float64 {
		return CUDAPath{Kernel: CUDANoKernel, Why: "no CUDA kernel for float64 Attention"}
	}
	if _, ok := flashHeads(c); ok && !c.Masked && c.DType != graph.Float32 {
		return CUDAPath{Kernel: CUDAFlash, Why: "no mask, head dim a multiple of 8 (sm_80+)"}
	}
	why, ok := memEffHeads(c)
	switch {
	case !ok:
		return unfused(why, "head dim", c.Dqk, c.Dv)
	case c.GQA && c.DType == graph.Float32:
		return unfused("float32 with grouped key/value heads", "")
	case c.Masked && !divisible(c.Nk, 4):
		return unfused(fmt.Sprintf("a mask needs the key length %s to be a multiple of 4", c.Nk), "length", c.Nk)
	}
	return CUDAPath{Kernel: CUDAMemoryEfficient, Why: "head dims multiples of 8"}
}

// gqaOnCUDA is com.microsoft.GroupQueryAttention's: float16 and bfloat16
// only, Flash when the head dim allows, else CUTLASS; it has no unfused path.
func gqaOnCUDA(c CUDACase) CUDAPath {
	if c.DType == graph.Float32 {
		return CUDAPath{Kernel: CUDANoKernel, Why: "no CUDA kernel for float32 GroupQueryAttention"}
	}
	if _, ok := flashHeads(c); ok {
		return CUDAPath{Kernel: CUDAFlash, Why: "head dim a multiple of 8 (sm_80+)"}
	}
	return CUDAPath{Kernel: CUDAMemoryEfficient, Why: "CUTLASS (no flash for this head dim)"}
}

func atLeast(d graph.Dim, n int64) bool {
	v, ok := d.Value()
	return ok && v >= n
}

// CUDAAdvice names the target to deploy a site with on ORT's CUDA EP: ORT's
// own MultiHeadAttention (--target ort, no custom-op library) where its
// CUDA kernel is memory-efficient, attnopt's where it is not.
func CUDAAdvice(c CUDACase) (target string, ort CUDAPath) {
	ort = mhaOnCUDA(c)
	if c.DType != graph.Float32 && c.DType != graph.Float16 {
		ort = CUDAPath{Kernel: CUDANoKernel, Why: "MultiHeadAttention takes float32 or float16, not " + c.DType.String()}
	}
	if ort.Kernel.MemoryEfficient() {
		return "ort", ort
	}
	return "attnopt", ort
}
