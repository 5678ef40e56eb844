package validate

import (
	"fmt"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
)

// Runner executes a model on named inputs.
type Runner interface {
	Name() string
	Run(m *graph.Model, inputs map[string]*eval.Tensor) (map[string]*eval.Tensor, error)
}

// GoRunner is the pure-Go reference runtime.
type GoRunner struct{}

func (GoRunner) Name() string { return "go" }

func (GoRunner) Run(m *graph.Model, in map[string]*eval.Tensor) (map[string]*eval.Tensor, error) {
	if bad := eval.UnsupportedOps(m); len(bad) > 0 {
		return nil, fmt.Errorf("the Go runtime does not support %v", bad)
	}
	return eval.Run(m, in, eval.Options{})
}
