package opdef

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// Domain and Version are the fused ops' opset import.
const (
	Domain  = "attnopt"
	Version = 1
)

// Limits of both ops. The kernels keep a head's features in one tile row
// (CPU tiles and CUDA instantiations up to 256, kernels/README.md), so a
// head size outside HeadDimMin..HeadDimMax is refused, by the C ABI check
// and by a target's Accept before a rewrite writes such an op.
const (
	HeadDimMin = 1
	HeadDimMax = 256
	// AxesMax is WindowAttention's most spatial axes (the C ABI's arrays).
	AxesMax = 3
)

// Attribute names, as every language spells them.
const (
	AttrScale         = "scale"
	AttrCausal        = "causal"
	AttrSlidingWindow = "sliding_window"
	AttrEmptyRows     = "empty_rows"
	AttrMaskFill      = "mask_fill"
	AttrCausalFill    = "causal_fill"
	AttrFillOnce      = "fill_once"
	AttrFillRound     = "fill_round"
	AttrSoftcap       = "softcap"
	AttrMaskFloor     = "mask_floor"
	AttrSpatialShape  = "spatial_shape"
	AttrWindow        = "window"
	AttrShift         = "shift"
)

var ioTypes = []graph.DType{graph.Float32, graph.Float16, graph.BFloat16}

func qkv() []Input {
	return []Input{
		{Name: "Q", Types: ioTypes, MinRank: 3, MaxRank: 4, Doc: "(B, Hq, Nq, Dqk), or (B, Nq, Dqk): one head"},
		{Name: "K", Types: ioTypes, MinRank: 3, MaxRank: 4, Doc: "(B, Hkv, Nk, Dqk), Q's type and rank; Hq a multiple of Hkv"},
		{Name: "V", Types: ioTypes, MinRank: 3, MaxRank: 4, Doc: "(B, Hkv, Nk, Dv); query head h reads key/value head h / (Hq/Hkv)"},
	}
}

var flag = []Named{{V: 0, Doc: "off"}, {V: 1, Doc: "on"}}

var negInf = float32(math.Inf(-1))

// FlashAttention is exact attention, rows with no visible key included
// (docs/fully-masked-rows.md).
var FlashAttention = &Op{
	Name: "FlashAttention",
	Inputs: append(qkv(), Input{Name: "mask", Optional: true,
		Types:   []graph.DType{graph.Bool, graph.Float32, graph.Float16, graph.BFloat16},
		MinRank: 2, MaxRank: 4,
		Doc: "bool (true = attend) or float (added to the scores); broadcasts, right-aligned, to (B, Hq, Nq, Nk), never expanded"}),
	Output: "(B, Hq, Nq, Dv), or rank 3 when Q is; Q's type",
	Attrs: []Attr{
		{Name: AttrScale, Kind: graph.AttrFloat, Computed: "1/sqrt(Dqk)", Rule: FinitePositive,
			Doc: "multiplies Q·Kᵀ before the mask is added", Always: true},
		{Name: AttrCausal, Kind: graph.AttrInt, Values: flag,
			Doc: "1: query i sees keys j ≤ i + Nk − Nq (bottom-right aligned)", Always: true},
		{Name: AttrSlidingWindow, Kind: graph.AttrInt, Lo: 0, Hi: NoHi, Needs: &Need{AttrCausal, 1},
			Doc:     "W > 0: and only keys j > i + Nk − Nq − W, the last W keys; a window over Nk is Nk",
			Written: "when the site has a sliding window"},
		{Name: AttrEmptyRows, Kind: graph.AttrInt, Values: []Named{
			{V: 0, Name: "zero", Doc: "zeros"},
			{V: 1, Name: "literal", Doc: "the softmax over every key's literal score; NaN where all are −inf"},
			{V: 2, Name: "literal_zero", Doc: "the same, but zeros where all are −inf (the source guarded them)"}},
			Doc: "what a row that sees no key yields", Written: "when a row may see no key"},
		{Name: AttrMaskFill, Kind: graph.AttrFloat, Float: negInf, Rule: FiniteOrNegInf,
			Doc: "literal rows: added to the score of a key the bool mask drops", Written: "when finite"},
		{Name: AttrCausalFill, Kind: graph.AttrFloat, Float: negInf, Rule: FiniteOrNegInf,
			Doc: "literal rows: added to the score of a key causal or the window drops", Written: "when finite"},
		{Name: AttrFillOnce, Kind: graph.AttrInt, Values: flag,
			Doc: "literal rows: 1, a key both drop gets min(mask term, causal_fill) once; 0, the two add", Written: "when 1"},
		{Name: AttrFillRound, Kind: graph.AttrInt, Values: flag,
			Doc: "literal rows: 1, literal scores round to the op's type after each add, as an fp16/bf16 graph did", Written: "when 1"},
		{Name: AttrSoftcap, Kind: graph.AttrFloat, Rule: FiniteNonNegative,
			Doc: "c > 0: the scaled score s becomes c·tanh(s/c) before the mask, causal and window apply (Gemma 2); 0: none", Written: "when the site caps its scores"},
		{Name: AttrMaskFloor, Kind: graph.AttrFloat, Float: negInf, Rule: NonPositiveOrNegInf,
			Doc: "literal rows: a float mask value at or below it drops the key too, so a row whose keys all sit at a finite fill is recomputed as the source rounds it", Written: "when a float mask's finite fill is known"},
	},
	Semantics: []string{
		"Scores are `scale`·Q·Kᵀ, capped to `softcap`·tanh(s/`softcap`) when `softcap` > 0, plus the mask: a bool mask drops the keys it holds false, a float mask is added. " +
			"`causal` and `sliding_window` drop keys by position. Softmax and accumulation are float32 for every type.",
		"A row that sees no key gives zeros unless `empty_rows` says otherwise; then the literal score of key j is " +
			"round(round(scale·q·k_j, capped) + term_j), with `mask_fill` for a key the bool mask drops and `causal_fill` " +
			"(combined by `fill_once`) for one causal or the window drops (docs/fully-masked-rows.md). " +
			"A float mask value at or below `mask_floor` counts as dropping its key when finding such rows.",
	},
	Code: []string{"kernels/src/cpu/flash_attention.cpp", "kernels/src/cpu/empty_rows.cpp", "kernels/src/cuda/",
		"eval/ops_attention.go", "eval/attention_rows.go"},
}

// WindowAttention is attention within the windows of a token grid, Swin's
// cyclic shift included: the approximate window plan (passes/canonical/approx.go).
var WindowAttention = &Op{
	Name:   "WindowAttention",
	Inputs: qkv(),
	Output: "(B, Hq, N, Dv), or rank 3 when Q is; Q's type",
	Attrs: []Attr{
		{Name: AttrScale, Kind: graph.AttrFloat, Required: true, Rule: FinitePositive,
			Doc: "multiplies Q·Kᵀ", Always: true},
		{Name: AttrSpatialShape, Kind: graph.AttrInts, Required: true, Lo: 1, Hi: NoHi, Len: Len{Min: 1, Max: AxesMax},
			Doc: "the token grid, tokens row-major over it; N = Nq = Nk is its product, at most 2^63 − 1", Always: true},
		{Name: AttrWindow, Kind: graph.AttrInts, Required: true, Lo: 1, Hi: NoHi, Len: Len{Min: 1, Max: AxesMax, Like: AttrSpatialShape},
			Doc: "window extent per axis; one over its axis is the axis", Always: true},
		{Name: AttrShift, Kind: graph.AttrInts, Computed: "zeros", Lo: NoLo, Hi: NoHi, Len: Len{Like: AttrSpatialShape},
			Doc: "cyclic shift per axis: torch.roll by −shift, then partition", Written: "when a shift is set"},
	},
	Base: []*graph.Attr{graph.FloatAttr(AttrScale, 0.5), graph.IntsAttr(AttrSpatialShape, []int64{2, 2}),
		graph.IntsAttr(AttrWindow, []int64{2, 2})},
	Semantics: []string{
		"On each axis (extent G, window w, shift s) the token at coordinate c is in window floor(((c − s) mod G) / w); " +
			"a token attends to exactly the tokens of its own window on every axis. The last window on an axis is " +
			"smaller when w does not divide G. `window` equal to `spatial_shape` is exact attention.",
	},
	Code: []string{"kernels/src/cpu/window_attention.cpp", "kernels/src/common/window_geometry.h", "eval/ops_attention.go"},
}
