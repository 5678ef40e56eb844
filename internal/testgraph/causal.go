package testgraph

import (
	"math"

	"github.com/attnopt/attnopt/graph"
)

// causalForms adds the causal masks exporters write (rank-4 sites), alone or
// with a (B, 1, 1, Nk) padding term:
//
//	causal_trilu        TorchScript SDPA(is_causal): Where(Equal(Trilu(Expand(1)), 0), -inf, 0) added
//	causal_const_pad    dynamo: a constant (1, 1, N, Nk) 0/-inf bias plus a padding bias
//	causal_range_pad    arange(Nk) ≤ arange(Nq)[:, None], And a bool padding mask, Where on the scores
//	causal_triu_inf     nn.Transformer: triu(full(-inf), 1) added
//	causal_min_pad      Min of a Where(tril, 0, finfo.min) bias and a padding bias (HF style)
//	causal_shifted      Trilu with k = 1: not the op's alignment, kept as a mask
//	causal_cast_where   transformers' MPT: Where(bool(Where(causal And padding, 0, min)), min, scores)
//	causal_band_pad     Gemma 3 under dynamo: Where(And(band∧causal constant, padding), 0, min) added
//	causal_fp16_pad     dynamo fp16: Where(And(tril constant, padding), 0, −65504) added (use DType float16)
//	alibi_const_pad     dynamo MPT: Where(not padding, min, C) added, C = slope_h·(j − i) below the diagonal, min above
//	alibi_row_pad       TorchScript MPT: Where(not padding, min, Where(not tril, min, slopes·−|j − i|)) added
func causalForms(b *B, o Opts, s, q, k string, dt graph.DType) string {
	nq, nk := int64(o.N), int64(o.NK)
	ninf := b.ScalarOf(dt, NegInf)
	zero := b.ScalarOf(dt, 0)
	pad := func() string { return b.Input("pad", dt, o.B, 1, 1, o.NK) }
	// An HF attention_mask of ids (B, Nk), 1 = keep, as a (B, 1, 1, Nk) bool.
	keep := func() string {
		am := b.Input("attention_mask", graph.Int64, o.B, o.NK)
		return b.Node("Unsqueeze", []string{b.Node("Cast", []string{am}, Int("to", int64(graph.Bool))), b.I64(1, 2)})
	}
	fmin := -math.MaxFloat32
	// plane is a (1, 1, Nq, Nk) constant of keep(i, j) for bool, else of val.
	plane := func(dt graph.DType, h int64, val func(h, i, j int64) float64) string {
		vals := make([]float64, 0, h*nq*nk)
		for c := int64(0); c < h; c++ {
			for i := int64(0); i < nq; i++ {
				for j := int64(0); j < nk; j++ {
					vals = append(vals, val(c, i, j))
				}
			}
		}
		return b.Const(dt, []int64{1, h, nq, nk}, vals...)
	}
	one := func(ok bool) float64 {
		if ok {
			return 1
		}
		return 0
	}
	slope := func(h int64) float64 { return math.Pow(2, -8*float64(h+1)/float64(o.H)) }
	drop := func() string { return b.Node("Not", []string{keep()}) }
	switch o.Mask {
	case "causal_cast_where":
		tril := plane(graph.Bool, 1, func(_, i, j int64) float64 { return one(j <= i+nk-nq) })
		cond := b.Node("And", []string{tril, keep()})
		add := b.Node("Where", []string{cond, zero, b.ScalarOf(dt, fmin)})
		dropped := b.Node("Cast", []string{add}, Int("to", int64(graph.Bool)))
		return b.Node("Where", []string{dropped, b.ScalarOf(dt, fmin), s})
	case "causal_band_pad":
		band := plane(graph.Bool, 1, func(_, i, j int64) float64 { return one(j <= i+nk-nq && j > i+nk-nq-4) })
		cond := b.Node("And", []string{band, keep()})
		return b.Node("Add", []string{s, b.Node("Where", []string{cond, zero, b.ScalarOf(dt, fmin)})})
	case "causal_fp16_pad":
		tril := plane(graph.Bool, 1, func(_, i, j int64) float64 { return one(j <= i+nk-nq) })
		cond := b.Node("And", []string{tril, keep()})
		return b.Node("Add", []string{s, b.Node("Where", []string{cond, zero, b.ScalarOf(dt, -65504)})})
	case "alibi_const_pad":
		c := plane(dt, int64(o.H), func(h, i, j int64) float64 {
			if j > i+nk-nq {
				return fmin
			}
			return slope(h) * float64(j-i)
		})
		return b.Node("Add", []string{s, b.Node("Where", []string{drop(), b.ScalarOf(dt, fmin), c})})
	case "alibi_row_pad":
		rel := plane(dt, 1, func(_, i, j int64) float64 { return float64(j - i) })
		sl := make([]float64, o.H)
		for h := range sl {
			sl[h] = slope(int64(h))
		}
		alibi := b.Node("Mul", []string{b.Node("Neg", []string{b.Node("Abs", []string{rel})}), b.Const(dt, []int64{1, int64(o.H), 1, 1}, sl...)})
		notTril := plane(graph.Bool, 1, func(_, i, j int64) float64 { return one(j > i+nk-nq) })
		inner := b.Node("Where", []string{notTril, b.ScalarOf(dt, fmin), alibi})
		return b.Node("Add", []string{s, b.Node("Where", []string{drop(), b.ScalarOf(dt, fmin), inner})})
	case "causal_trilu", "causal_shifted":
		qs := b.Node("Slice", []string{b.Node("Shape", []string{q}), b.I64(-2), b.I64(-1)})
		ks := b.Node("Slice", []string{b.Node("Shape", []string{k}), b.I64(-2), b.I64(-1)})
		size := b.Node("Concat", []string{qs, ks}, Int("axis", 0))
		ones := b.Node("Expand", []string{b.ScalarOf(dt, 1), size})
		ins := []string{ones}
		if o.Mask == "causal_shifted" {
			ins = append(ins, b.Const(graph.Int64, nil, 1))
		}
		tri := b.Node("Trilu", ins, Int("upper", 0))
		eq := b.Node("Equal", []string{tri, b.ScalarOf(dt, 0)})
		return b.Node("Add", []string{s, b.Node("Where", []string{eq, ninf, zero})})
	case "causal_const_pad":
		vals := make([]float64, nq*nk)
		for i := int64(0); i < nq; i++ {
			for j := int64(0); j < nk; j++ {
				if j > i+nk-nq {
					vals[i*nk+j] = math.Inf(-1)
				}
			}
		}
		c := b.Const(dt, []int64{1, 1, nq, nk}, vals...)
		return b.Node("Add", []string{s, b.Node("Add", []string{c, pad()})})
	case "causal_range_pad":
		lim := func(v string) string {
			return b.Node("Squeeze", []string{b.Node("Slice", []string{b.Node("Shape", []string{v}), b.I64(-2), b.I64(-1)}), b.I64(0)})
		}
		i0, i1 := b.Const(graph.Int64, nil, 0), b.Const(graph.Int64, nil, 1)
		rows := b.Node("Unsqueeze", []string{b.Node("Range", []string{i0, lim(q), i1}), b.I64(1)})
		cols := b.Node("Range", []string{i0, lim(k), i1})
		causal := b.Node("LessOrEqual", []string{cols, rows})
		cond := b.Node("And", []string{causal, keep()})
		return b.Node("Where", []string{cond, s, ninf})
	case "causal_triu_inf":
		full := b.Node("ConstantOfShape", []string{b.I64(nq, nk)}, Tensor("value", dt, NegInf))
		return b.Node("Add", []string{s, b.Node("Trilu", []string{full, b.Const(graph.Int64, nil, 1)})})
	case "causal_min_pad":
		vals := make([]float64, nq*nk)
		for i := int64(0); i < nq; i++ {
			for j := int64(0); j <= i && j < nk; j++ {
				vals[i*nk+j] = 1
			}
		}
		tril := b.Const(graph.Bool, []int64{1, 1, nq, nk}, vals...)
		fmin := b.ScalarOf(dt, fmin)
		cb := b.Node("Where", []string{tril, zero, fmin})
		pb := b.Node("Where", []string{keep(), zero, fmin})
		return b.Node("Add", []string{s, b.Node("Min", []string{cb, pb})})
	}
	return s
}
