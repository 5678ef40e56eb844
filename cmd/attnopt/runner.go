package main

import (
	"fmt"

	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/validate"
)

// checkCustomOps fails early, as a setup problem (exit 2), when ONNX Runtime
// must run attnopt ops and the custom-op library cannot be found.
func checkCustomOps(runtime, flag string, m *graph.Model) error {
	if runtime != "ort" || m.Opset("attnopt") == 0 {
		return nil
	}
	if _, err := ort.CustomOpsLibrary(flag); err != nil {
		return usageError{err}
	}
	return nil
}

// newRunner picks the runtime for validation.
func newRunner(name, ortLib, customOps string) (validate.Runner, error) {
	switch name {
	case "go":
		return validate.GoRunner{}, nil
	case "ort":
		return newORTRunner(ortLib, customOps)
	}
	return nil, usageError{fmt.Errorf("--runtime %q: want go or ort", name)}
}
