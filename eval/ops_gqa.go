package eval

import (
	"fmt"
	"math"
)

// opGroupQueryAttention is com.microsoft.GroupQueryAttention without rotary
// embedding or quantized/shared caches. Batch b holds seqlens_k[b]+1 valid
// tokens in all: its past keeps the first total-S entries of past_key and
// the S new keys follow them in present_key (padding after), as in ORT's
// separate past/present buffers.
func opGroupQueryAttention(c *opCtx, in []*Tensor) ([]*Tensor, error) {
	q, k, v := in[0], opt(in, 1), opt(in, 2)
	pastK, pastV := opt(in, 3), opt(in, 4)
	seqlens, total := opt(in, 5), opt(in, 6)
	switch {
	case k == nil || v == nil:
		return nil, fmt.Errorf("GroupQueryAttention: packed QKV is not supported")
	case c.attrInt("do_rotary", 0) != 0 || opt(in, 7) != nil:
		return nil, fmt.Errorf("GroupQueryAttention: rotary embedding is not supported")
	case c.attrInt("local_window_size", -1) != -1:
		return nil, fmt.Errorf("GroupQueryAttention: local_window_size is not supported")
	case c.attrInt("smooth_softmax", -1) == 1 || opt(in, 11) != nil:
		return nil, fmt.Errorf("GroupQueryAttention: smooth softmax / head_sink is not supported")
	case opt(in, 12) != nil || opt(in, 13) != nil || opt(in, 14) != nil:
		return nil, fmt.Errorf("GroupQueryAttention: quantized caches and q/k norms are not supported")
	case seqlens == nil || total == nil:
		return nil, fmt.Errorf("GroupQueryAttention: seqlens_k and total_sequence_length are required")
	case (pastK == nil) != (pastV == nil):
		return nil, fmt.Errorf("GroupQueryAttention: past_key and past_value must come together")
	}
	H, Hkv := int(c.attrInt("num_heads", 0)), int(c.attrInt("kv_num_heads", 0))
	qh, err := headsFirst(q, H)
	if err != nil {
		return nil, err
	}
	kh, err := headsFirst(k, Hkv)
	if err != nil {
		return nil, err
	}
	vh, err := headsFirst(v, Hkv)
	if err != nil {
		return nil, err
	}
	B, S := q.Shape[0], q.Shape[1]
	P := 0
	if pastK != nil {
		P = pastK.Shape[2]
	}
	T := P + S
	lens := toInts(seqlens.ints())
	if len(lens) != B {
		return nil, fmt.Errorf("seqlens_k has %d entries for batch %d", len(lens), B)
	}
	kvLen, off := make([]int, B), make([]int, B)
	for b := range lens {
		kvLen[b] = lens[b] + 1
		off[b] = kvLen[b] - S // valid past tokens of batch b
		if off[b] < 0 || off[b] > P {
			return nil, fmt.Errorf("seqlens_k[%d]=%d does not fit %d past and %d new tokens", b, lens[b], P, S)
		}
	}
	present := func(past, cur *Tensor) *Tensor {
		d := cur.Shape[3]
		out := NewTensor(cur.DType, []int{B, Hkv, T, d})
		for b := 0; b < B; b++ {
			for h := 0; h < Hkv; h++ {
				dst := out.F[(b*Hkv+h)*T*d:]
				if past != nil {
					copy(dst[:off[b]*d], past.F[(b*Hkv+h)*P*d:])
				}
				copy(dst[off[b]*d:(off[b]+S)*d], cur.F[(b*Hkv+h)*S*d:])
			}
		}
		return out
	}
	pk, pv := present(pastK, kh), present(pastV, vh)
	sp, err := qkvSpec(qh, pk, pv)
	if err != nil {
		return nil, err
	}
	sp.scale = float64(c.attrFloat("scale", 0))
	if sp.scale == 0 {
		sp.scale = 1 / math.Sqrt(float64(sp.Dqk))
	}
	sp.softcap = float64(c.attrFloat("softcap", 0))
	sp.kvLen = kvLen
	if c.attrInt("causal", 1) != 0 {
		sp.causal, sp.causalOff = true, off
	}
	if ab := opt(in, 10); ab != nil {
		if _, err := broadcastShapes(ab.Shape, []int{B, H, S, T}); err != nil {
			return nil, fmt.Errorf("attention_bias %v does not broadcast to %v", ab.Shape, []int{B, H, S, T})
		}
		sp.setMask(ab)
	}
	o := flashAttention(sp, c.threads)
	return []*Tensor{headsLast(q.DType, o, B, H, S, sp.Dv), pk, pv}, nil
}

func init() { register("com.microsoft", "GroupQueryAttention", opGroupQueryAttention) }
