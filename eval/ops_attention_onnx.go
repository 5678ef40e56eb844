package eval

import (
	"fmt"
	"math"

	"github.com/attnopt/attnopt/graph"
)

// headsFirst turns (B,N,H*D) into contiguous (B,H,N,D).
func headsFirst(t *Tensor, heads int) (*Tensor, error) {
	if heads <= 0 || t.Shape[2]%heads != 0 {
		return nil, fmt.Errorf("hidden size %d not divisible by %d heads", t.Shape[2], heads)
	}
	x := t.reshaped([]int{t.Shape[0], t.Shape[1], heads, t.Shape[2] / heads})
	return transpose(x, []int{0, 2, 1, 3}), nil
}

// headsLast turns (B,H,N,D) data into (B,N,H*D).
func headsLast(dt graph.DType, data []float32, b, h, n, d int) *Tensor {
	x := &Tensor{DType: dt, Shape: []int{b, h, n, d}, F: data}
	y := transpose(x, []int{0, 2, 1, 3})
	return y.reshaped([]int{b, n, h * d})
}

func concatSeq(past, cur *Tensor) (*Tensor, error) {
	if past == nil {
		return cur, nil
	}
	r, err := opConcat(&opCtx{node: &graph.Node{Attrs: []*graph.Attr{graph.IntAttr("axis", 2)}}}, []*Tensor{past, cur})
	if err != nil {
		return nil, err
	}
	return r[0], nil
}

func opt(in []*Tensor, i int) *Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// opAttention is ONNX Attention (opset 23/24).
func opAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	q, k, v := in[0], in[1], in[2]
	mask, pastK, pastV, nonpad := opt(in, 3), opt(in, 4), opt(in, 5), opt(in, 6)
	rank := len(q.Shape)
	if rank == 3 {
		qh, kvh := int(c.attrInt("q_num_heads", 0)), int(c.attrInt("kv_num_heads", 0))
		var err error
		if q, err = headsFirst(q, qh); err != nil {
			return nil, err
		}
		if k, err = headsFirst(k, kvh); err != nil {
			return nil, err
		}
		if v, err = headsFirst(v, kvh); err != nil {
			return nil, err
		}
	} else if rank != 4 {
		return nil, fmt.Errorf("Attention inputs of rank %d", rank)
	}
	if (pastK == nil) != (pastV == nil) {
		return nil, fmt.Errorf("past_key and past_value must come together")
	}
	var err error
	if k, err = concatSeq(pastK, k); err != nil {
		return nil, err
	}
	if v, err = concatSeq(pastV, v); err != nil {
		return nil, err
	}
	sp, err := qkvSpec(q, k, v)
	if err != nil {
		return nil, err
	}
	sp.scale = float64(c.attrFloat("scale", float32(1/math.Sqrt(float64(sp.Dqk)))))
	sp.softcap = float64(c.attrFloat("softcap", 0))
	if nonpad != nil {
		sp.kvLen = toInts(nonpad.ints())
		if len(sp.kvLen) != sp.B {
			return nil, fmt.Errorf("nonpad_kv_seqlen has %d entries for batch %d", len(sp.kvLen), sp.B)
		}
	}
	if c.attrInt("is_causal", 0) != 0 {
		// Query i sees keys j <= i + offset, offset = the cached keys that
		// precede the block. Without a cache the offset is 0: top-left
		// aligned when Nq != Nk (ONNX's reference and backend test data),
		// unlike attnopt.FlashAttention's bottom-right Nk-Nq.
		sp.causal = true
		switch {
		case pastK != nil:
			sp.causalOff = sameCausalOff(sp.B, pastK.Shape[2])
		case nonpad != nil:
			sp.causalOff = make([]int, sp.B)
			for b := range sp.causalOff {
				sp.causalOff[b] = sp.kvLen[b] - sp.Nq
			}
		default:
			sp.causalOff = sameCausalOff(sp.B, 0)
		}
	}
	if mask != nil {
		// A mask shorter than the keys is padded: the extra keys are masked.
		if w := mask.Shape[len(mask.Shape)-1]; w < sp.Nk {
			fill := FromFloats(nil, []float32{float32(math.Inf(-1))})
			if mask.B != nil {
				fill = FromBools(nil, []bool{false})
			}
			pads := make([]int64, 2*len(mask.Shape))
			pads[2*len(mask.Shape)-1] = int64(sp.Nk - w)
			r, err := opPad(&opCtx{node: &graph.Node{}, opset: 18}, []*Tensor{mask, FromInts([]int{len(pads)}, pads), fill})
			if err != nil {
				return nil, err
			}
			mask = r[0]
		}
		if _, err := broadcastShapes(mask.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk}); err != nil {
			return nil, fmt.Errorf("attn_mask %v does not broadcast to %v", mask.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk})
		}
		sp.setMask(mask)
	}
	o := flashAttention(sp, c.threads)
	var y *Tensor
	if rank == 3 {
		y = headsLast(q.DType, o, sp.B, sp.Hq, sp.Nq, sp.Dv)
	} else {
		y = &Tensor{DType: q.DType, Shape: []int{sp.B, sp.Hq, sp.Nq, sp.Dv}, F: o}
	}
	outs := []*Tensor{y, k, v}
	if len(c.node.Outputs) > 3 && c.node.Outputs[3] != nil && c.node.Outputs[3].Name != "" {
		qk, err := qkOutput(sp, int(c.attrInt("qk_matmul_output_mode", 0)))
		if err != nil {
			return nil, err
		}
		qk.DType = q.DType
		outs = append(outs, qk)
	}
	return outs, nil
}

// qkOutput materialises the optional qk_matmul_output of ONNX Attention
// in the order the computation runs: mode 0 the scaled product, 1 after
// softcap, 2 after the mask is added, 3 after softmax.
func qkOutput(sp *attnSpec, mode int) (*Tensor, error) {
	if mode < 0 || mode > 3 {
		return nil, fmt.Errorf("qk_matmul_output_mode %d", mode)
	}
	out := NewTensor(graph.Float32, []int{sp.B, sp.Hq, sp.Nq, sp.Nk})
	raw := *sp
	raw.fmask, raw.bmask, raw.causal, raw.kvLen = nil, nil, false, nil
	if mode == 0 {
		raw.softcap = 0
	}
	group := sp.Hq / sp.Hkv
	row := make([]float64, sp.Nk)
	for b := 0; b < sp.B; b++ {
		for h := 0; h < sp.Hq; h++ {
			for i := 0; i < sp.Nq; i++ {
				qrow := sp.Q[((b*sp.Hq+h)*sp.Nq+i)*sp.Dqk:][:sp.Dqk]
				for j := 0; j < sp.Nk; j++ {
					krow := sp.K[((b*sp.Hkv+h/group)*sp.Nk+j)*sp.Dqk:][:sp.Dqk]
					if mode <= 1 {
						row[j] = raw.score(b, h, i, j, qrow, krow)
					} else {
						row[j] = sp.score(b, h, i, j, qrow, krow)
					}
				}
				if mode == 3 {
					mx := math.Inf(-1)
					for _, x := range row {
						mx = math.Max(mx, x)
					}
					sum := 0.0
					for j, x := range row {
						row[j] = math.Exp(x - mx)
						sum += row[j]
					}
					for j := range row {
						if sum > 0 {
							row[j] /= sum
						} else {
							row[j] = 0
						}
					}
				}
				o := out.F[((b*sp.Hq+h)*sp.Nq+i)*sp.Nk:]
				for j, x := range row {
					o[j] = float32(x)
				}
			}
		}
	}
	return out, nil
}

// opMultiHeadAttention is com.microsoft.MultiHeadAttention for unpacked
// Q/K/V, with optional projection bias and KV cache (not shared buffers).
func opMultiHeadAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	q, k, v := in[0], opt(in, 1), opt(in, 2)
	heads := int(c.attrInt("num_heads", 0))
	switch {
	case len(q.Shape) != 3:
		return nil, fmt.Errorf("MultiHeadAttention: packed query of rank %d is not supported", len(q.Shape))
	case k == nil || v == nil:
		return nil, fmt.Errorf("MultiHeadAttention: packed QKV (no key/value) is not supported")
	case len(k.Shape) == 5:
		return nil, fmt.Errorf("MultiHeadAttention: packed KV is not supported")
	case (opt(in, 6) != nil) != (opt(in, 7) != nil):
		return nil, fmt.Errorf("MultiHeadAttention: past_key and past_value must come together")
	case opt(in, 6) != nil && (len(k.Shape) != 3 || len(v.Shape) != 3):
		return nil, fmt.Errorf("MultiHeadAttention: past_key with 4-D key/value is not supported")
	case opt(in, 8) != nil || opt(in, 9) != nil:
		return nil, fmt.Errorf("MultiHeadAttention: past_sequence_length/cache_indirection (shared buffers) are not supported")
	case len(c.node.Outputs) > 3 && c.node.Outputs[3] != nil && c.node.Outputs[3].Name != "":
		return nil, fmt.Errorf("MultiHeadAttention: the qk output is not supported")
	}
	if b := opt(in, 3); b != nil {
		// Projection bias, laid out as [q | k | v]. Keys and values given per
		// head (B,H,L,d) are taken as already projected: only q gets its
		// part (our reading of ORT's cross-attention cache path).
		dq := q.Shape[2]
		dk, dv := dq, dq
		if len(k.Shape) == 3 {
			dk, dv = k.Shape[2], v.Shape[2]
		}
		if b.Numel() != dq+dk+dv {
			return nil, fmt.Errorf("MultiHeadAttention: bias has %d values, want %d", b.Numel(), dq+dk+dv)
		}
		add := func(t *Tensor, off, n int) *Tensor {
			r := t.Clone()
			for i := range r.F {
				r.F[i] += b.F[off+i%n]
			}
			return r.normalize()
		}
		q = add(q, 0, dq)
		if len(k.Shape) == 3 {
			k, v = add(k, dq, dk), add(v, dq+dk, dv)
		}
	}
	if pk := opt(in, 6); pk != nil {
		// KV cache: present = concat(past, new) along the sequence axis
		var err error
		if k, err = headsFirst(k, heads); err != nil {
			return nil, err
		}
		if v, err = headsFirst(v, heads); err != nil {
			return nil, err
		}
		if k, err = concatSeq(pk, k); err != nil {
			return nil, err
		}
		if v, err = concatSeq(opt(in, 7), v); err != nil {
			return nil, err
		}
	}
	y, kh, vh, err := mhaCore(c, q, k, v, opt(in, 4), opt(in, 5), heads)
	if err != nil {
		return nil, err
	}
	return []*Tensor{y, kh, vh}, nil
}

// mhaCore is the attention of the contrib ops: q (B,S,H·d); k, v (B,L,H·d)
// or (B,H,L,d); int32 key padding mask; additive attention bias. It returns
// the (B,S,H·dv) output and K, V as (B,H,L,d).
func mhaCore(c *opCtx, q, k, v, padMask, attnBias *Tensor, heads int) (*Tensor, *Tensor, *Tensor, error) {
	qh, err := headsFirst(q, heads)
	if err != nil {
		return nil, nil, nil, err
	}
	kh, vh := k, v
	if len(k.Shape) == 3 {
		if kh, err = headsFirst(k, heads); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(v.Shape) == 3 {
		if vh, err = headsFirst(v, heads); err != nil {
			return nil, nil, nil, err
		}
	}
	sp, err := qkvSpec(qh, kh, vh)
	if err != nil {
		return nil, nil, nil, err
	}
	if sp.Hkv != sp.Hq {
		return nil, nil, nil, fmt.Errorf("MultiHeadAttention: key has %d heads, num_heads is %d", sp.Hkv, sp.Hq)
	}
	sp.scale = float64(c.attrFloat("scale", 0))
	if sp.scale == 0 {
		sp.scale = 1 / math.Sqrt(float64(sp.Dqk))
	}
	sp.fill, sp.fillValue = true, float64(c.attrFloat("mask_filter_value", -10000))
	if c.attrInt("unidirectional", 0) != 0 {
		sp.causal = true
		sp.causalOff = sameCausalOff(sp.B, sp.Nk-sp.Nq)
	}
	if m := padMask; m != nil {
		ids := m.ints()
		switch {
		case len(m.Shape) == 1 && m.Shape[0] == sp.B:
			sp.kvLen = toInts(ids)
		case len(m.Shape) == 2 && m.Shape[0] == sp.B && m.Shape[1] == sp.Nk:
			sp.bmask = castTo(m, graph.Bool).B
			sp.bst = [4]int{sp.Nk, 0, 0, 1}
		case len(m.Shape) == 3 && m.Shape[0] == sp.B && m.Shape[1] == sp.Nq && m.Shape[2] == sp.Nk:
			sp.bmask = castTo(m, graph.Bool).B
			sp.bst = [4]int{sp.Nq * sp.Nk, 0, sp.Nk, 1}
		default:
			return nil, nil, nil, fmt.Errorf("MultiHeadAttention: key_padding_mask of shape %v is not supported", m.Shape)
		}
	}
	if ab := attnBias; ab != nil {
		if _, err := broadcastShapes(ab.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk}); err != nil {
			return nil, nil, nil, fmt.Errorf("attention_bias %v does not broadcast to %v", ab.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk})
		}
		st := bcastStrides(ab.Shape, []int{sp.B, sp.Hq, sp.Nq, sp.Nk})
		sp.fmask = ab.F
		copy(sp.fst[:], st)
		sp.half = q.DType == graph.Float16
	}
	o := flashAttention(sp, c.threads)
	y := headsLast(q.DType, o, sp.B, sp.Hq, sp.Nq, sp.Dv)
	return y, kh, vh, nil
}

func init() {
	register("", "Attention", opAttention)
	register("com.microsoft", "MultiHeadAttention", opMultiHeadAttention)
}
