package eval

import (
	"math"
	"math/rand"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

func runMS(op string, at attrs, ins ...*Tensor) ([]*Tensor, error) {
	return runOp(op, "com.microsoft", 17, at, ins, 1)
}

func TestContribElementwise(t *testing.T) {
	x := f32(s(1, 2), 1, -1)
	got, err := runMS("BiasGelu", nil, x, f32(s(2), 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got[0], f32(s(1, 2), 0.84134475, 0.84134475), 1e-6, 0); d != "" {
		t.Error("BiasGelu:", d)
	}
	got, err = runMS("FastGelu", nil, f32(s(1), 1))
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got[0], f32(s(1), 0.84119199), 1e-6, 0); d != "" {
		t.Error("FastGelu:", d)
	}
	// LN(x + skip + bias)·gamma + beta over the last axis
	got, err = runMS("SkipLayerNormalization", attrs{"epsilon": 0.0}, f32(s(1, 1, 2), 1, 2), f32(s(1, 1, 2), 0, 2), f32(s(2), 1, 3), f32(s(2), 0, 1), f32(s(2), 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got[0], f32(s(1, 1, 2), -1, 4), 1e-6, 0); d != "" {
		t.Error("SkipLayerNormalization:", d)
	}
}

// The contrib Attention is a QKV projection followed by MultiHeadAttention.
func TestContribAttentionMatchesMHA(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	B, S, In, H, d := 2, 5, 6, 2, 3
	x, w, b := randTensor(rng, B, S, In), randTensor(rng, In, 3*H*d), randTensor(rng, 3*H*d)
	pad := &Tensor{DType: graph.Int32, Shape: []int{B, S}, I: []int64{1, 1, 1, 1, 0, 1, 1, 1, 1, 1}}
	got, err := runOp("Attention", "com.microsoft", 17, attrs{"num_heads": H, "unidirectional": 1}, []*Tensor{x, w, b, pad}, 1)
	if err != nil {
		t.Fatal(err)
	}
	qkv, _ := matmul(x, w, 1)
	q, k, v := sliceAxis(qkv, 2, 0, H*d), sliceAxis(qkv, 2, H*d, H*d), sliceAxis(qkv, 2, 2*H*d, H*d)
	want, err := runOp("MultiHeadAttention", "com.microsoft", 17, attrs{"num_heads": H, "unidirectional": 1}, []*Tensor{q, k, v, b, pad}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if dd := diff(got[0], want[0], 1e-5, 0); dd != "" {
		t.Fatal(dd)
	}
}

// Every mask_index form is its raw 0/1 equivalent, and a row that keeps no
// key is plain attention (the finite fill is a constant the softmax
// cancels), computed without rounding the scores at the fill's magnitude.
func TestContribAttentionMaskForms(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	B, S, In, H := 2, 4, 6, 2
	x, w, b := randTensor(rng, B, S, In), randTensor(rng, In, 3*In), randTensor(rng, 3*In)
	i32 := func(shape []int, v ...int64) *Tensor { return &Tensor{DType: graph.Int32, Shape: shape, I: v} }
	run := func(mask *Tensor) *Tensor {
		t.Helper()
		ins := []*Tensor{x, w, b}
		if mask != nil {
			ins = append(ins, mask)
		}
		got, err := runOp("Attention", "com.microsoft", 17, attrs{"num_heads": H}, ins, 1)
		if err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	none := run(nil)
	// Batch 1 keeps no key in every form, so it must equal no mask there.
	raw := run(i32(s(B, S), 1, 1, 1, 0, 0, 0, 0, 0))
	for _, c := range []struct {
		name string
		mask *Tensor
	}{
		{"lengths (B)", i32(s(B), 3, 0)},
		{"spans (2B)", i32(s(2*B), 3, 2, 0, 2)},
		{"raw (B, S, T)", i32(s(B, S, S), 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)},
		{"raw (B, T), negative dropped", i32(s(B, S), 1, 1, 1, -1, 0, 0, 0, 0)},
	} {
		if dd := diff(run(c.mask), raw, 1e-6, 0); dd != "" {
			t.Errorf("%s: %s", c.name, dd)
		}
	}
	half := S * In
	if dd := diff(&Tensor{DType: graph.Float32, Shape: s(S, In), F: raw.F[half:]}, &Tensor{DType: graph.Float32, Shape: s(S, In), F: none.F[half:]}, 1e-6, 0); dd != "" {
		t.Errorf("row that keeps no key: %s", dd)
	}
}

// A KV cache is the same as attending over the concatenated keys.
func TestMHAPastKV(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	B, S, P, H, d := 1, 3, 4, 2, 4
	q, k, v := randTensor(rng, B, S, H*d), randTensor(rng, B, S, H*d), randTensor(rng, B, S, H*d)
	pk, pv := randTensor(rng, B, H, P, d), randTensor(rng, B, H, P, d)
	got, err := runOp("MultiHeadAttention", "com.microsoft", 17, attrs{"num_heads": H, "unidirectional": 1}, []*Tensor{q, k, v, nil, nil, nil, pk, pv}, 3)
	if err != nil {
		t.Fatal(err)
	}
	kh, _ := headsFirst(k, H)
	vh, _ := headsFirst(v, H)
	fk, _ := concatSeq(pk, kh)
	fv, _ := concatSeq(pv, vh)
	qh, _ := headsFirst(q, H)
	ref := naiveAttention(qh, fk, fv, 1/math.Sqrt(float64(d)), nil, func(b, h, i, j int) bool { return j <= i+P })
	r := make([]float32, len(ref))
	for i, x := range ref {
		r[i] = float32(x)
	}
	if dd := diff(got[0], headsLast(graph.Float32, r, B, H, S, d), 1e-5, 0); dd != "" {
		t.Fatal(dd)
	}
	if dd := diff(got[1], fk, 0, 0); dd != "" {
		t.Fatal("present_key:", dd)
	}
}

// GroupQueryAttention: batch 0 uses its whole past, batch 1 only the first
// past token (seqlens_k = 1 + S - 1); new keys follow the valid past.
func TestGroupQueryAttention(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	B, S, P, H, Hkv, d := 2, 2, 3, 4, 2, 4
	q, k, v := randTensor(rng, B, S, H*d), randTensor(rng, B, S, Hkv*d), randTensor(rng, B, S, Hkv*d)
	pk, pv := randTensor(rng, B, Hkv, P, d), randTensor(rng, B, Hkv, P, d)
	seqlens := &Tensor{DType: graph.Int32, Shape: s(B), I: []int64{int64(P + S - 1), int64(S)}}
	total := &Tensor{DType: graph.Int32, Shape: nil, I: []int64{int64(P + S)}}
	got, err := runOp("GroupQueryAttention", "com.microsoft", 17, attrs{"num_heads": H, "kv_num_heads": Hkv}, []*Tensor{q, k, v, pk, pv, seqlens, total}, 3)
	if err != nil {
		t.Fatal(err)
	}
	qh, _ := headsFirst(q, H)
	kh, _ := headsFirst(k, Hkv)
	vh, _ := headsFirst(v, Hkv)
	// expected present: valid past, then the new tokens, zero padding
	want := NewTensor(graph.Float32, s(B, Hkv, P+S, d))
	wantV := NewTensor(graph.Float32, s(B, Hkv, P+S, d))
	valid := []int{P, 1}
	for b := 0; b < B; b++ {
		for h := 0; h < Hkv; h++ {
			for j := 0; j < P+S; j++ {
				for x := 0; x < d; x++ {
					o := ((b*Hkv+h)*(P+S)+j)*d + x
					switch {
					case j < valid[b]:
						want.F[o], wantV.F[o] = pk.F[((b*Hkv+h)*P+j)*d+x], pv.F[((b*Hkv+h)*P+j)*d+x]
					case j < valid[b]+S:
						n := j - valid[b]
						want.F[o], wantV.F[o] = kh.F[((b*Hkv+h)*S+n)*d+x], vh.F[((b*Hkv+h)*S+n)*d+x]
					}
				}
			}
		}
	}
	if dd := diff(got[1], want, 0, 0); dd != "" {
		t.Fatal("present_key:", dd)
	}
	ref := naiveAttention(qh, want, wantV, 1/math.Sqrt(float64(d)), nil, func(b, h, i, j int) bool { return j <= i+valid[b] })
	r := make([]float32, len(ref))
	for i, x := range ref {
		r[i] = float32(x)
	}
	if dd := diff(got[0], headsLast(graph.Float32, r, B, H, S, d), 1e-5, 0); dd != "" {
		t.Fatal(dd)
	}
}
