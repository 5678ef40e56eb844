package main

import (
	"fmt"

	"github.com/attnopt/attnopt/validate"
)

// newORTRunner is replaced when the ONNX Runtime backend lands (eval/ort).
func newORTRunner(ortLib, customOps string) (validate.Runner, error) {
	return nil, fmt.Errorf("--runtime ort: the ONNX Runtime backend is not built into this binary")
}
