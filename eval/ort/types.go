// Package ort runs ONNX models in ONNX Runtime through a thin cgo binding of
// its C API. The library is loaded with dlopen at run time, so building this
// package needs neither the ORT headers nor the library; the project's
// custom-op library (domain attnopt) can be registered per session.
//
// Library lookup (find.go, find_python.go): LocateLibrary (--ort-lib,
// $ORT_LIB, the Python environments' onnxruntime, the system) and
// LocateCustomOps (--custom-ops, $ATTNOPT_CUSTOM_OPS, the attnopt wheel,
// the system); a checkout's .cache/ort and kernels/build only in
// development mode ($ATTNOPT_DEV=1). Built without cgo, the
// package compiles but Open fails.
package ort

import (
	"errors"

	"github.com/attnopt/attnopt/graph"
)

// errNoCgo is what Open returns in a build without cgo.
var errNoCgo = errors.New("ort: built without cgo; the ONNX Runtime backend needs CGO_ENABLED=1 and a C compiler")

// SessionOptions configures a session.
type SessionOptions struct {
	// CustomOpsLibrary is a shared library registered with
	// RegisterCustomOpsLibrary_V2 (the project's libattnopt_ort.so); empty
	// for none.
	CustomOpsLibrary string
	// Threads is the intra-op thread count; 0 lets ORT choose.
	Threads int
	// DisableOptimizations turns ORT's graph optimizations off.
	DisableOptimizations bool
	// ExternalDataDir is the folder the model's external-data locations
	// are relative to: the model is handed over as bytes, which ORT would
	// otherwise resolve against the working directory (and refuse outside
	// it). Empty for a model without a folder.
	ExternalDataDir string
}

// IOInfo describes a graph input or output.
type IOInfo struct {
	Name  string
	DType graph.DType
	Shape []int64 // -1 for symbolic
}
