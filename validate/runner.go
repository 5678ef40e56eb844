package validate

import (
	"fmt"
	"strings"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// Runner executes a model on named inputs.
type Runner interface {
	Name() string
	Run(m *graph.Model, inputs map[string]*eval.Tensor) (map[string]*eval.Tensor, error)
}

// UnsupportedError is a runtime that lacks ops a check needs: the check
// could not be carried out, which says nothing about the rewrite.
type UnsupportedError struct {
	Runtime string
	Ops     []string // domain:Op
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("the %s runtime does not support %s; try --runtime ort", e.Runtime, strings.Join(e.Ops, ", "))
}

// GoRunner is the pure-Go reference runtime.
type GoRunner struct{}

func (GoRunner) Name() string { return "go" }

func (GoRunner) Run(m *graph.Model, in map[string]*eval.Tensor) (map[string]*eval.Tensor, error) {
	if bad := eval.UnsupportedOps(m); len(bad) > 0 {
		return nil, &UnsupportedError{Runtime: "Go", Ops: bad}
	}
	return eval.Run(m, in, eval.Options{})
}
