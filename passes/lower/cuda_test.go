package lower

import (
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// The kernel each ORT op takes on the CUDA EP, by the conditions of ORT's
// CUDA sources (cuda_path.go), and the target inspect advises from it.
func TestCUDAKernelChoice(t *testing.T) {
	c := func(dt graph.DType, dqk, dv, nq, nk int64, masked, gqa bool) CUDACase {
		return CUDACase{DType: dt, Dqk: graph.D(dqk), Dv: graph.D(dv), Nq: graph.D(nq), Nk: graph.D(nk), Masked: masked, GQA: gqa}
	}
	f16, f32, bf16 := graph.Float16, graph.Float32, graph.BFloat16
	cases := []struct {
		name           string
		c              CUDACase
		mha, onnx, gqa CUDAKernel
		why            string // in MultiHeadAttention's reason
		advice         string
	}{
		// The seed SDPA case: head dim 4, bool mask: every ORT kernel is unfused.
		{"seed d4 masked f16", c(f16, 4, 4, 10000, 10000, true, false), CUDAUnfused, CUDAUnfused, CUDAMemoryEfficient, "head dim 4 is not a multiple of 8", "attnopt"},
		{"d8 unmasked f16", c(f16, 8, 8, 10000, 10000, false, false), CUDAFlash, CUDAFlash, CUDAFlash, "float16, no mask", "ort"},
		{"d8 masked f16", c(f16, 8, 8, 10000, 10000, true, false), CUDAMemoryEfficient, CUDAMemoryEfficient, CUDAFlash, "multiples of 8", "ort"},
		{"d64 masked f16 Nq 12", c(f16, 64, 64, 12, 12, true, false), CUDAUnfused, CUDAMemoryEfficient, CUDAFlash, "multiple of 8", "attnopt"},
		{"d64 masked f32 Nq 4096", c(f32, 64, 64, 4096, 4096, true, false), CUDAMemoryEfficient, CUDAMemoryEfficient, CUDANoKernel, "multiples of 8", "ort"},
		{"SAGAN Dqk 8 Dv 64 f32", c(f32, 8, 64, 65536, 65536, false, false), CUDAMemoryEfficient, CUDAMemoryEfficient, CUDANoKernel, "multiples of 8", "ort"},
		{"SAGAN f16: Dqk != Dv, no flash", c(f16, 8, 64, 65536, 65536, false, false), CUDAMemoryEfficient, CUDAMemoryEfficient, CUDAMemoryEfficient, "multiples of 8", "ort"},
		{"f32 short", c(f32, 64, 64, 128, 128, false, false), CUDAUnfused, CUDAMemoryEfficient, CUDANoKernel, "shorter than 256", "attnopt"},
		{"f32 GQA", c(f32, 64, 64, 4096, 4096, false, true), CUDAMemoryEfficient, CUDAUnfused, CUDANoKernel, "multiples of 8", "ort"},
		{"bf16 d64", c(bf16, 64, 64, 4096, 4096, false, false), CUDAMemoryEfficient, CUDAFlash, CUDAFlash, "multiples of 8", "attnopt"},
		{"masked Nk 10001", c(f16, 64, 64, 10000, 10001, true, false), CUDAMemoryEfficient, CUDAUnfused, CUDAFlash, "multiples of 8", "ort"},
		{"head dim 320", c(f16, 320, 320, 1024, 1024, false, false), CUDAMemoryEfficient, CUDAMemoryEfficient, CUDAMemoryEfficient, "multiples of 8", "ort"},
		{"symbolic head dim", CUDACase{DType: f16, Dqk: graph.Sym("d"), Dv: graph.Sym("d"), Nq: graph.D(64), Nk: graph.D(64)}, CUDAUnfused, CUDAUnfused, CUDAMemoryEfficient, "is symbolic", "attnopt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mha, onnx, gqa := mhaOnCUDA(tc.c), attentionOnCUDA(tc.c), gqaOnCUDA(tc.c)
			if mha.Kernel != tc.mha || onnx.Kernel != tc.onnx || gqa.Kernel != tc.gqa {
				t.Fatalf("MHA %v (%s), Attention %v (%s), GQA %v (%s); want %v, %v, %v", mha.Kernel, mha.Why, onnx.Kernel, onnx.Why,
					gqa.Kernel, gqa.Why, tc.mha, tc.onnx, tc.gqa)
			}
			if !strings.Contains(mha.Why, tc.why) {
				t.Errorf("MHA reason %q, want it to say %q", mha.Why, tc.why)
			}
			if got, _ := CUDAAdvice(tc.c); got != tc.advice {
				t.Errorf("advice --target %s, want %s", got, tc.advice)
			}
		})
	}
	if k := attentionOnCUDA(c(graph.Float64, 8, 8, 64, 64, false, false)).Kernel; k != CUDANoKernel {
		t.Errorf("float64 Attention: %v, want no CUDA kernel", k)
	}
	for k, s := range map[CUDAKernel]string{CUDAAttnopt: "attnopt", CUDAFlash: "flash", CUDAMemoryEfficient: "memory-efficient", CUDAUnfused: "unfused", CUDANoKernel: "cpu-fallback"} {
		if k.String() != s || k.MemoryEfficient() == (k == CUDAUnfused || k == CUDANoKernel) {
			t.Errorf("%d: %q, memory-efficient %v", k, k.String(), k.MemoryEfficient())
		}
	}
}

// A rule that reads a symbolic dim is ORT's choice per run: the path is
// marked AtRunTime and its reason says what it depends on, for every op.
func TestCUDAChoiceAtRunTime(t *testing.T) {
	seq, d := graph.Sym("seq"), graph.Sym("d")
	cases := []struct {
		name string
		path CUDAPath
		want string // in the reason; "" when the choice is static
	}{
		{"MHA f32, symbolic length", mhaOnCUDA(CUDACase{DType: graph.Float32, Dqk: graph.D(64), Dv: graph.D(64), Nq: seq, Nk: seq}), "depends on the length at run time"},
		{"MHA f32, short static length", mhaOnCUDA(CUDACase{DType: graph.Float32, Dqk: graph.D(64), Dv: graph.D(64), Nq: graph.D(128), Nk: graph.D(128)}), ""},
		{"MHA masked f16, symbolic query length", mhaOnCUDA(CUDACase{DType: graph.Float16, Dqk: graph.D(64), Dv: graph.D(64), Nq: seq, Nk: seq, Masked: true}), "depends on the length at run time"},
		{"MHA symbolic head dim", mhaOnCUDA(CUDACase{DType: graph.Float16, Dqk: d, Dv: d, Nq: graph.D(64), Nk: graph.D(64)}), "depends on the head dim at run time"},
		{"Attention masked, symbolic key length", attentionOnCUDA(CUDACase{DType: graph.Float16, Dqk: graph.D(64), Dv: graph.D(64), Nq: seq, Nk: seq, Masked: true}), "depends on the length at run time"},
		{"Attention head dim 4", attentionOnCUDA(CUDACase{DType: graph.Float16, Dqk: graph.D(4), Dv: graph.D(4), Nq: seq, Nk: seq, Masked: true}), ""},
	}
	for _, tc := range cases {
		if tc.path.AtRunTime != (tc.want != "") || !strings.Contains(tc.path.Why, tc.want) || tc.path.Kernel != CUDAUnfused {
			t.Errorf("%s: %v (%q), at run time %v; want unfused, at run time %v, saying %q", tc.name, tc.path.Kernel, tc.path.Why, tc.path.AtRunTime, tc.want != "", tc.want)
		}
	}
}
