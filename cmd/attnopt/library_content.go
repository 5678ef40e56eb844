package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attnopt/attnopt/eval/ort"
)

// cudaEP is ONNX Runtime's CUDA execution provider, which runs attnopt's
// ops on a GPU when the custom-op library has code for it.
const cudaEP = "CUDAExecutionProvider"

// onCUDA says whether attnopt's ops in a rewritten model would run on the
// CUDA execution provider here, and why not: the library needs CUDA code
// for a visible device, and ONNX Runtime needs its CUDA provider
// (onnxruntime-gpu). providers is nil when no ONNX Runtime was found.
func onCUDA(lib ort.LibraryContent, cuda ort.CUDAStatus, providers []string) (bool, string) {
	switch {
	case lib.CUDA == "none" || lib.CUDA == "":
		return false, "no: the custom-op library has no CUDA kernels (the wheel python/build-wheel.sh makes has them: python/README.md)"
	case len(cuda.Devices) == 0:
		why := cuda.Error
		if why == "" {
			why = "the driver sees no device"
		}
		return false, "no: " + why
	}
	var fit []string
	for _, d := range cuda.Devices {
		if lib.RunsOn(d.SM) {
			fit = append(fit, fmt.Sprintf("%s (sm_%d)", d.Name, d.SM))
		}
	}
	switch {
	case len(fit) == 0:
		return false, fmt.Sprintf("no: the library has no code for this GPU (sm_%d; it has %s)", cuda.Devices[0].SM, strings.Join(lib.CUDAArchs, ", "))
	case providers == nil:
		return false, "no: no ONNX Runtime found to run them (pip install onnxruntime-gpu)"
	case !slices.Contains(providers, cudaEP):
		return false, "no: this ONNX Runtime has no " + cudaEP + " (a CPU-only package: pip install onnxruntime-gpu)"
	}
	return true, "yes: " + strings.Join(fit, ", ")
}

// libraryFound is the custom-op library a model with attnopt's ops needs,
// found as --runtime ort would (the --custom-ops flag, then the search of
// eval/ort/find.go), and what it can run; err says why there is none.
type libraryFound struct {
	path    string
	content ort.LibraryContent
	err     error
}

func findLibrary(flag string) libraryFound {
	f, err := ort.LocateCustomOps(flag)
	if err != nil {
		return libraryFound{err: err}
	}
	c, err := ort.ReadLibraryContent(f.Path)
	return libraryFound{path: f.Path, content: c, err: err}
}

// line is rewrite's last text line: the library that runs the model's
// attnopt ops here and its kernels, or why none was found.
func (l libraryFound) line() string {
	if l.err != nil {
		return "custom ops: " + l.err.Error()
	}
	return "custom ops: " + l.path + ": " + l.content.Kernels()
}
