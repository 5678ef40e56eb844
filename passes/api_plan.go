package passes

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/canonical"
	"github.com/attnopt/attnopt/passes/lower"
	"github.com/attnopt/attnopt/passes/plan"
)

// Plans (passes/plan) and targets (passes/lower), under the names cmd/,
// report/ and validate/ use.
type (
	Plan          = plan.Plan
	PlanKind      = plan.Kind
	ApproxOptions = plan.ApproxOptions
	Grid          = plan.Grid

	Target     = lower.Target
	ModelError = lower.ModelError
	CUDAKernel = lower.CUDAKernel
	CUDAPath   = lower.CUDAPath
	CUDACase   = lower.CUDACase

	// SDPA is one canonical node as a target reads it.
	SDPA = canonical.SDPA
)

const (
	PlanExact   = plan.Exact
	PlanWindow  = plan.Window
	PlanPoolKV  = plan.PoolKV
	PlanPoolQKV = plan.PoolQKV

	MetaSite     = plan.MetaSite
	MetaPlan     = plan.MetaPlan
	MetaMaxError = plan.MetaMaxError

	CUDAAttnopt         = lower.CUDAAttnopt
	CUDAFlash           = lower.CUDAFlash
	CUDAMemoryEfficient = lower.CUDAMemoryEfficient
	CUDAUnfused         = lower.CUDAUnfused
	CUDANoKernel        = lower.CUDANoKernel
)

// SiteOf returns the site id a rewrite recorded on a fused node.
func SiteOf(n *graph.Node) (int, bool) { return plan.SiteOf(n) }

// RecordedPlan reads the plan a rewrite recorded on a fused node.
func RecordedPlan(n *graph.Node) (kind PlanKind, approx *ApproxOptions, grid []int64, ok bool) {
	return plan.RecordedPlan(n)
}

// RecoverGrid traces Q (and K) back to the spatial tensors they come from.
func RecoverGrid(s *Site) *Grid { return plan.RecoverGrid(s) }

// TargetByName returns the target for --target.
func TargetByName(name string) (Target, error) { return lower.TargetByName(name) }

// TargetNames lists the targets.
func TargetNames() []string { return lower.TargetNames() }

// TargetOwning names the target whose fused op n is ("" when none).
func TargetOwning(n *graph.Node) string { return lower.TargetOwning(n) }

// CUDACaseOfSite reads a matched site, before any rewrite.
func CUDACaseOfSite(s *Site) CUDACase { return lower.CUDACaseOfSite(s) }

// CUDAAdvice names the target to deploy a site with on ORT's CUDA EP.
func CUDAAdvice(c CUDACase) (target string, ort CUDAPath) { return lower.CUDAAdvice(c) }
