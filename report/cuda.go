package report

import (
	"fmt"
	"io"

	"github.com/attnopt/attnopt/passes"
)

// CUDAInfo is what a site costs on ONNX Runtime's CUDA execution provider
// (passes/lower/cuda.go). In inspect: the kernel ORT's own MultiHeadAttention
// would run there and the target to deploy with (ort where that kernel is
// memory-efficient, attnopt where not); in rewrite: the kernel the written
// op runs.
type CUDAInfo struct {
	Kernel string `json:"kernel"`
	Why    string `json:"why"`
	// Materialises: that kernel holds the B·H·Nq·Nk scores (ORT's unfused
	// path; "cpu-fallback" means the node leaves the GPU instead).
	Materialises bool   `json:"materialises"`
	Recommended  string `json:"recommended_target,omitempty"`
	// AtRunTime: ORT picks the kernel per run from a dim that is symbolic
	// here; Kernel is its pick when that dim fails the rule (Why).
	AtRunTime bool `json:"at_run_time,omitempty"`
}

func newCUDAInfo(p passes.CUDAPath) *CUDAInfo {
	return &CUDAInfo{Kernel: p.Kernel.String(), Why: p.Why, Materialises: p.Kernel == passes.CUDAUnfused, AtRunTime: p.AtRunTime}
}

// runs is how a line says ORT runs c's kernel: as a fact, or hedged when
// the choice is made at run time.
func (c *CUDAInfo) runs(fact string) string {
	if c.AtRunTime {
		return "may run"
	}
	return fact
}

// cudaAdvice is inspect's per-site advice for a GPU deployment.
func cudaAdvice(s *passes.Site) *CUDAInfo {
	target, mha := passes.CUDAAdvice(passes.CUDACaseOfSite(s))
	c := newCUDAInfo(mha)
	c.Recommended = target
	return c
}

// writeCUDAAdvice prints inspect's advice, one line per site.
func writeCUDAAdvice(w io.Writer, sites []SiteInfo) {
	for _, s := range sites {
		c := s.CUDA
		if c == nil {
			continue
		}
		if c.Recommended == "ort" {
			fmt.Fprintf(w, "site %d on ONNX Runtime's CUDA EP: --target ort (its MultiHeadAttention runs the %s kernel: %s; no custom-op library needed)\n", s.ID, c.Kernel, c.Why)
			continue
		}
		fmt.Fprintf(w, "site %d on ONNX Runtime's CUDA EP: --target attnopt (ORT's MultiHeadAttention %s %s there: %s)\n", s.ID, c.runs("would run"), c.Kernel, c.Why)
	}
}

// cudaWarning is rewrite's line for a fused op that ORT's CUDA EP runs
// without a memory-efficient kernel ("" otherwise).
func cudaWarning(s RewriteSite) string {
	c := s.CUDA
	if !s.Fused || c == nil {
		return ""
	}
	what := "its unfused kernel, which materialises the scores"
	switch {
	case c.Kernel == passes.CUDANoKernel.String():
		what = "no CUDA kernel: the node falls back to the CPU EP"
	case !c.Materialises:
		return ""
	}
	return fmt.Sprintf("note: %s: on ONNX Runtime's CUDA EP %s %s %s (%s); --target attnopt runs attnopt.FlashAttention's CUDA kernel", s.label(), s.Op, c.runs("runs"), what, c.Why)
}
