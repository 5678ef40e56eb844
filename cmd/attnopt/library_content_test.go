package main

import (
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval/ort"
)

func TestOnCUDA(t *testing.T) {
	gpuLib := ort.LibraryContent{CUDA: "13.0.88", CUDAArchs: []string{"sm_75", "sm_90", "compute_90"}}
	cpuLib := ort.LibraryContent{CUDA: "none"}
	h200 := ort.CUDAStatus{Driver: "13.0", Devices: []ort.CUDADevice{{Name: "NVIDIA H200", SM: 90}}}
	v100 := ort.CUDAStatus{Driver: "12.4", Devices: []ort.CUDADevice{{Name: "Tesla V100", SM: 70}}}
	none := ort.CUDAStatus{Error: "no CUDA driver (libcuda.so.1 not found)"}
	gpuORT := []string{"CUDAExecutionProvider", "CPUExecutionProvider"}
	cpuORT := []string{"CPUExecutionProvider"}
	cases := []struct {
		name      string
		lib       ort.LibraryContent
		cuda      ort.CUDAStatus
		providers []string
		ok        bool
		says      string
	}{
		{"everything there", gpuLib, h200, gpuORT, true, "yes: NVIDIA H200 (sm_90)"},
		{"CPU-only library", cpuLib, h200, gpuORT, false, "no CUDA kernels"},
		{"no driver", gpuLib, none, gpuORT, false, "libcuda.so.1 not found"},
		{"no code for the GPU", gpuLib, v100, gpuORT, false, "no code for this GPU (sm_70"},
		{"CPU onnxruntime", gpuLib, h200, cpuORT, false, "onnxruntime-gpu"},
		{"no ONNX Runtime", gpuLib, h200, nil, false, "no ONNX Runtime"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, says := onCUDA(tc.lib, tc.cuda, tc.providers)
			if ok != tc.ok || !strings.Contains(says, tc.says) {
				t.Errorf("got %v %q, want %v and %q", ok, says, tc.ok, tc.says)
			}
		})
	}
}
