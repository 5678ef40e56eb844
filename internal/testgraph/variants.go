package testgraph

import (
	"math"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
)

// Opts describes one attention block; every variant of docs/design.md §3 is a
// parameter here rather than a copy of the builder.
type Opts struct {
	Opset      int64
	DType      graph.DType
	B, H, N, D int // Dv = D unless DV is set
	NK, DV     int
	Rank       int    // 2, 3, 4 or 5 (Hiera's (B, H, windows, N, D); 2 windows)
	Op         string // "MatMul" or "Einsum"
	KForm      string // "transpose" (default), "pre" (K given as Kᵀ), "einsum-natural", "view3d" (dynamo's Kᵀ), "bnhd" (flax: Q, K, V, out (B, N, H, D) through ellipsis einsums; rank 4)
	Scale      string // "none", "mul", "div", "q", "qk", "shape"
	// HeadScale multiplies the scores by an (H, 1, 1) tensor: "const",
	// "computed" (exp(clip(w)), Swin V2's logit scale at run time) or
	// "div_batch" (divided by a (B, 1, 1, 1) constant), or "after_mask"
	// (applied after the mask, a negative case). Rank 4 only.
	HeadScale string
	// Repeat gives K and V KVHeads heads and repeats them to H (rank 4):
	// "expand" (transformers' repeat_kv), "tile", "gather" (head indices),
	// "expand_3d" (dynamo: Kᵀ made through a (B·H, N, D) view) or
	// "expand_one" (multi-query: Expand of the one kv head, KVHeads 1).
	Repeat  string
	KVHeads int
	// Softcap caps the scaled scores at SoftcapC before the mask (Gemma 2):
	// "div" Mul(Tanh(Div(s, c)), c), "mul_inv" Mul(c, Tanh(Mul(1/c, s))),
	// "cast" (fp16: Cast to float32 around the Tanh); or negative cases:
	// "after_mask" (the cap of the masked scores), "scaled_after" (a scale
	// of the capped scores).
	Softcap  string
	SoftcapC float64 // 0 means 0.5
	Mask     string  // "none", "add", "where", "add_where", "where_inv", "where_finite", "blend" (Keras), "sub_blend" (Megatron), "sub_inf" (Funnel), "renorm" (jax2onnx, after the softmax), "plane_pad", "window_view", "head_view[_alibi|_open|_plane]" (rank 3), "causal", or a form of causal.go
	Casts    bool    // Cast to float32 around the softmax
	// FloatPV keeps the probabilities in float32 and casts V to float32
	// for P·V, after any repeat (fp16 TorchScript SDPA); needs Casts.
	FloatPV     bool
	SoftmaxAxis int64 // 0 means -1 (or the opset default when Opset < 13)
	ScoresOut   bool  // also expose the scores as a graph output (negative case)
	Dropout     bool
}

func (o Opts) dims(last int) []any {
	if o.KForm == "bnhd" {
		return []any{o.B, o.N, o.H, last}
	}
	switch o.Rank {
	case 2:
		return []any{o.N, last}
	case 3:
		return []any{o.B * o.H, o.N, last}
	case 5:
		return []any{o.B, o.H, 2, o.N, last}
	}
	return []any{o.B, o.H, o.N, last}
}

func (o Opts) kdims(n, last int) []any {
	d := o.dims(last)
	if o.KForm == "bnhd" {
		d[1] = n
		return d
	}
	d[len(d)-2] = n
	if o.Rank == 5 && o.KVHeads > 0 {
		d[2] = o.KVHeads // K and V shared by the query axis 2 (grouped)
	}
	return d
}

func swapPerm(rank int) []int64 {
	p := make([]int64, rank)
	for i := range p {
		p[i] = int64(i)
	}
	p[rank-1], p[rank-2] = p[rank-2], p[rank-1]
	return p
}

// Attention builds one site with the given options; the output is "out".
func Attention(o Opts) *B {
	if o.Opset == 0 {
		o.Opset = 17
	}
	if o.DType == graph.Undefined {
		o.DType = graph.Float32
	}
	if o.Rank == 0 {
		o.Rank = 4
	}
	if o.NK == 0 {
		o.NK = o.N
	}
	if o.DV == 0 {
		o.DV = o.D
	}
	if o.Op == "" {
		o.Op = "MatMul"
	}
	b := New(o.Opset)
	dt := o.DType
	q := b.Input("q", dt, o.dims(o.D)...)
	var k, v string
	if o.Repeat != "" {
		k, v = repeatedKV(b, &o)
	} else if o.KForm == "pre" {
		kd := o.kdims(o.D, o.NK)
		kd[len(kd)-2], kd[len(kd)-1] = o.D, o.NK
		k = b.Input("k", dt, kd...)
	} else {
		k = b.Input("k", dt, o.kdims(o.NK, o.D)...)
	}
	if v == "" {
		v = b.Input("v", dt, o.kdims(o.NK, o.DV)...)
	}
	scale := 1 / math.Sqrt(float64(o.D))
	switch o.Scale {
	case "q":
		q = b.Node("Mul", []string{q, b.ScalarOf(dt, scale)})
	case "qk":
		q = b.Node("Mul", []string{q, b.ScalarOf(dt, math.Sqrt(scale))})
	}
	var s string
	letters := "wbhij"[5-o.Rank:]
	batch := letters[:o.Rank-2]
	switch {
	case o.KForm == "bnhd":
		s = b.Node("Einsum", []string{q, k}, Str("equation", "...qhd,...khd->...hqk"))
	case o.Op == "Einsum" && o.KForm == "einsum-natural":
		s = b.Node("Einsum", []string{q, k}, Str("equation", batch+"id,"+batch+"jd->"+batch+"ij"))
	default:
		kt := k
		switch o.KForm {
		case "pre":
		case "view3d":
			// dynamo: Kᵀ through a (B·H, N, D) view, rank 4 only.
			bh, nk, d := int64(o.B*o.H), int64(o.NK), int64(o.D)
			k3 := b.Node("Reshape", []string{k, b.I64(bh, nk, d)})
			k3 = b.Node("Transpose", []string{k3}, Ints("perm", 0, 2, 1))
			kt = b.Node("Reshape", []string{k3, b.I64(int64(o.B), int64(o.H), d, nk)})
		default:
			kt = b.Node("Transpose", []string{k}, Ints("perm", swapPerm(o.Rank)...))
		}
		if o.Scale == "qk" {
			kt = b.Node("Mul", []string{kt, b.ScalarOf(dt, math.Sqrt(scale))})
		}
		if o.Op == "Einsum" {
			s = b.Node("Einsum", []string{q, kt}, Str("equation", batch+"id,"+batch+"dj->"+batch+"ij"))
		} else {
			s = b.Node("MatMul", []string{q, kt})
		}
	}
	scores := s
	if o.Casts {
		s = b.Node("Cast", []string{s}, Int("to", int64(graph.Float32)))
	}
	sdt := dt
	if o.Casts {
		sdt = graph.Float32
	}
	switch o.Scale {
	case "mul":
		s = b.Node("Mul", []string{s, b.ScalarOf(sdt, scale)})
	case "div":
		s = b.Node("Div", []string{s, b.ScalarOf(sdt, math.Sqrt(float64(o.D)))})
	case "shape":
		sh := b.Node("Shape", []string{q})
		last := b.Node("Slice", []string{sh, b.I64(-1), b.I64(math.MaxInt64)})
		f := b.Node("Cast", []string{last}, Int("to", int64(sdt)))
		s = b.Node("Div", []string{s, b.Node("Sqrt", []string{f})})
	}
	switch o.HeadScale {
	case "const":
		s = b.Node("Mul", []string{s, b.positive(sdt, int64(o.H), 1, 1)})
	case "computed":
		w := b.Weight(sdt, int64(o.H), 1, 1)
		c := b.Node("Exp", []string{b.Node("Clip", []string{w, "", b.ScalarOf(sdt, math.Log(100))})})
		s = b.Node("Mul", []string{c, s})
	case "div_batch":
		s = b.Node("Div", []string{s, b.positive(sdt, int64(o.B), 1, 1, 1)})
	}
	if o.Softcap != "after_mask" {
		s = softcap(b, o, s, sdt)
	}
	maskDims := []any{1, 1, 1, o.N, o.NK}[5-max(o.Rank, 2):]
	switch o.Mask {
	case "add":
		padding := append([]any{o.B, 1, 1}, o.NK)[4-min(o.Rank, 4):]
		if o.Rank == 5 {
			padding = []any{o.B, 1, 1, 1, o.NK}
		}
		m := b.Input("mask", sdt, padding...)
		s = b.Node("Add", []string{s, m})
	case "where":
		m := b.Input("mask", graph.Bool, maskDims...)
		s = b.Node("Where", []string{m, s, b.ScalarOf(sdt, NegInf)})
	case "where_inv":
		m := b.Input("mask", graph.Bool, maskDims...)
		s = b.Node("Where", []string{m, b.ScalarOf(sdt, NegInf), s})
	case "add_where":
		m := b.Input("mask", graph.Bool, maskDims...)
		s = b.Node("Add", []string{s, b.Node("Where", []string{m, b.ScalarOf(sdt, 0), b.ScalarOf(sdt, NegInf)})})
	case "where_finite":
		m := b.Input("mask", graph.Bool, maskDims...)
		s = b.Node("Where", []string{m, s, b.ScalarOf(sdt, -10000)})
	case "sub_inf":
		// Funnel: scores − INF·(1 − mask) with INF = 1e6, the padding mask
		// cast to float and viewed as (B, 1, 1, Nk). Rank 4.
		pad := b.Input("mask", graph.Bool, o.B, o.NK)
		m := b.Node("Reshape", []string{b.Node("Cast", []string{pad}, Int("to", int64(sdt))), b.I64(int64(o.B), 1, 1, int64(o.NK))})
		inf := b.Node("Mul", []string{b.Node("Sub", []string{b.ScalarOf(sdt, 1), m}), b.ScalarOf(sdt, 1e6)})
		s = b.Node("Sub", []string{s, inf})
	case "sub_blend":
		// Megatron: w·b − c·(1 − b), here with b a cast of a bool mask and
		// c = finfo.max (Megatron's 10000 replaces the scores: refused).
		mf := b.Node("Cast", []string{b.Input("mask", graph.Bool, maskDims...)}, Int("to", int64(sdt)))
		keep := b.Node("Mul", []string{s, mf})
		drop := b.Node("Mul", []string{b.Node("Sub", []string{b.ScalarOf(sdt, 1), mf}), b.ScalarOf(sdt, math.MaxFloat32)})
		s = b.Node("Sub", []string{keep, drop})
	case "blend":
		// Keras through tf2onnx: Add(Mul(Cast(m), s), Mul(c, Cast(Not(m)))).
		m := b.Input("mask", graph.Bool, maskDims...)
		keep := b.Node("Mul", []string{b.Node("Cast", []string{m}, Int("to", int64(sdt))), s})
		notm := b.Node("Cast", []string{b.Node("Not", []string{m})}, Int("to", int64(sdt)))
		s = b.Node("Add", []string{keep, b.Node("Mul", []string{b.ScalarOf(sdt, -0.7*math.MaxFloat32), notm})})
	case "plane_pad":
		// A key padding mask built as a full plane, the same in every query
		// row (jax2onnx's make_attention_mask): And(ones (B, Nq, 1), pad
		// (B, 1, Nk)) viewed as (B, 1, Nq, Nk). Rank 4.
		pad := b.Input("mask", graph.Bool, o.B, o.NK)
		ones := make([]float64, o.B*o.N)
		for i := range ones {
			ones[i] = 1
		}
		rows := b.Const(graph.Bool, []int64{int64(o.B), int64(o.N), 1}, ones...)
		cols := b.Node("Reshape", []string{pad, b.I64(int64(o.B), 1, int64(o.NK))})
		plane := b.Node("Reshape", []string{b.Node("And", []string{rows, cols}), b.I64(int64(o.B), 1, int64(o.N), int64(o.NK))})
		s = b.Node("Where", []string{plane, s, b.ScalarOf(sdt, NegInf)})
	case "window_view":
		// Swin: a relative-position bias, then a per-window mask added in a
		// (B/nW, nW, H, N, N) view of the scores; nW = 2.
		rel := b.Input("relbias", sdt, 1, o.H, o.N, o.NK)
		s = b.Node("Add", []string{s, rel})
		win := b.Input("winmask", sdt, 1, 2, 1, o.N, o.NK)
		v5 := b.Node("Reshape", []string{s, b.I64(-1, 2, int64(o.H), int64(o.N), int64(o.NK))})
		v5 = b.Node("Add", []string{v5, win})
		s = b.Node("Reshape", []string{v5, b.I64(-1, int64(o.H), int64(o.N), int64(o.NK))})
	case "head_view", "head_view_alibi", "head_view_open", "head_view_plane":
		// BLOOM (rank 3): an ALiBi bias on the bmm scores (head_view_alibi),
		// then masked_fill with finfo.min in a (B, H, N, N) view (a (N, N)
		// mask in head_view_plane); P is viewed back below, except in
		// head_view_open (a negative case: with B = 1, MatMul broadcasts the
		// viewed P against the rank-3 V).
		if o.Mask == "head_view_alibi" {
			s = b.Node("Add", []string{s, b.Input("alibi", sdt, o.B*o.H, 1, o.NK)})
		}
		s = b.Node("Reshape", []string{s, b.I64(-1, int64(o.H), int64(o.N), int64(o.NK))})
		dims := []any{o.B, 1, o.N, o.NK}
		if o.Mask == "head_view_plane" {
			dims = dims[2:]
		}
		drop := b.Input("mask", graph.Bool, dims...)
		s = b.Node("Where", []string{drop, b.ScalarOf(sdt, -math.MaxFloat32), s})
	case "causal":
		// GPT-2: a registered lower-triangular buffer sliced to the shapes.
		size := max(o.N, o.NK) + 3
		tril := make([]float64, size*size)
		for i := 0; i < size; i++ {
			for j := 0; j <= i; j++ {
				tril[i*size+j] = 1
			}
		}
		buf := b.Const(graph.Bool, []int64{1, 1, int64(size), int64(size)}, tril...)
		ks := b.Node("Shape", []string{k})
		kl := b.Node("Slice", []string{ks, b.I64(-2), b.I64(-1)})
		qs := b.Node("Shape", []string{q})
		ql := b.Node("Slice", []string{qs, b.I64(-2), b.I64(-1)})
		start := b.Node("Sub", []string{kl, ql})
		rows := b.Node("Slice", []string{buf, start, kl, b.I64(2)})
		cond := b.Node("Slice", []string{rows, b.I64(0), kl, b.I64(3)})
		s = b.Node("Where", []string{cond, s, b.ScalarOf(sdt, -10000)})
	}
	if o.Softcap == "after_mask" {
		s = softcap(b, o, s, sdt)
	}
	if o.HeadScale == "after_mask" {
		// (scores + mask)·c: the mask is scaled too (a negative case).
		s = b.Node("Mul", []string{s, b.positive(sdt, int64(o.H), 1, 1)})
	}
	s = causalForms(b, o, s, q, k, sdt)
	var smAttrs []*onnxpb.AttributeProto
	if o.SoftmaxAxis != 0 {
		smAttrs = append(smAttrs, Int("axis", o.SoftmaxAxis))
	}
	p := b.Node("Softmax", []string{s}, smAttrs...)
	if o.Mask == "renorm" {
		// jax2onnx's masked dot_product_attention: the mask applied after
		// the softmax and the rows renormalised, zeros where none is kept.
		m := b.Node("Cast", []string{b.Input("mask", graph.Bool, maskDims...)}, Int("to", int64(sdt)))
		x := b.Node("Mul", []string{p, m})
		z := b.Node("ReduceSum", []string{x, b.I64(-1)})
		g := b.Node("Greater", []string{z, b.ScalarOf(sdt, 0)})
		norm := b.Node("Div", []string{x, b.Node("Where", []string{g, z, b.ScalarOf(sdt, 1)})})
		p = b.Node("Where", []string{g, norm, b.ScalarOf(sdt, 0)})
	}
	if o.Casts && !o.FloatPV {
		p = b.Node("Cast", []string{p}, Int("to", int64(dt)))
	}
	if o.FloatPV {
		v = b.Node("Cast", []string{v}, Int("to", int64(graph.Float32)))
	}
	if o.Dropout {
		p = b.Node("Dropout", []string{p})
	}
	if strings.HasPrefix(o.Mask, "head_view") && o.Mask != "head_view_open" {
		p = b.Node("Reshape", []string{p, b.I64(-1, int64(o.N), int64(o.NK))})
	}
	switch {
	case o.KForm == "bnhd":
		p = b.Node("Einsum", []string{p, v}, Str("equation", "...hqk,...khd->...qhd"))
	case o.Op == "Einsum":
		p = b.Node("Einsum", []string{p, v}, Str("equation", batch+"ij,"+batch+"jd->"+batch+"id"))
	default:
		p = b.Node("MatMul", []string{p, v})
	}
	b.rename(p, "out")
	if o.ScoresOut {
		b.Output(scores)
	}
	return b
}

// softcap applies o's softcap form to the scores s (of type dt).
func softcap(b *B, o Opts, s string, dt graph.DType) string {
	c := o.SoftcapC
	if c == 0 {
		c = 0.5
	}
	switch o.Softcap {
	case "div", "after_mask", "scaled_after":
		s = b.Node("Mul", []string{b.Node("Tanh", []string{b.Node("Div", []string{s, b.ScalarOf(dt, c)})}), b.ScalarOf(dt, c)})
	case "mul_inv":
		s = b.Node("Mul", []string{b.ScalarOf(dt, c), b.Node("Tanh", []string{b.Node("Mul", []string{b.ScalarOf(dt, 1/c), s})})})
	case "cast":
		x := b.Node("Cast", []string{b.Node("Div", []string{s, b.ScalarOf(dt, c)})}, Int("to", int64(graph.Float32)))
		t := b.Node("Cast", []string{b.Node("Tanh", []string{x})}, Int("to", int64(dt)))
		s = b.Node("Mul", []string{t, b.ScalarOf(dt, c)})
	}
	if o.Softcap == "scaled_after" {
		s = b.Node("Mul", []string{s, b.ScalarOf(dt, 2)})
	}
	return s
}

// positive adds a constant with entries in [0.5, 2.5).
func (b *B) positive(dt graph.DType, dims ...int64) string {
	return b.random(dt, dims, func() float64 { return 0.5 + 2*b.rng.Float64() })
}

// Classifier is a Linear → Softmax head: a Softmax that is not attention.
func Classifier() *B {
	b := New(17)
	x := b.Input("x", graph.Float32, 2, 16)
	y := b.Node("MatMul", []string{x, b.Weight(graph.Float32, 16, 10)})
	p := b.Node("Softmax", []string{y}, Int("axis", -1))
	b.rename(p, "out")
	return b
}
