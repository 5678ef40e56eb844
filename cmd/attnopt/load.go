package main

import (
	"os"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
	"github.com/spf13/cobra"
)

// pinFlags are --shape and --dim, shared by the commands that analyse.
type pinFlags struct {
	shapes []string
	dims   []string
}

func (p *pinFlags) register(c *cobra.Command) {
	c.Flags().StringArrayVar(&p.shapes, "shape", nil, "pin an input's shape, NAME=1x3x224x224 (repeatable)")
	c.Flags().StringArrayVar(&p.dims, "dim", nil, "pin a symbolic dim, SYM=N (repeatable)")
}

func (p *pinFlags) pins() (graph.Pins, error) {
	pins := graph.Pins{Shapes: map[string][]int64{}, Dims: map[string]int64{}}
	for _, s := range p.shapes {
		name, dims, err := graph.ParseShapePin(s)
		if err != nil {
			return pins, usageError{err}
		}
		pins.Shapes[name] = dims
	}
	for _, s := range p.dims {
		name, v, err := graph.ParseDimPin(s)
		if err != nil {
			return pins, usageError{err}
		}
		pins.Dims[name] = v
	}
	return pins, nil
}

// loadModel loads a model and applies the pins.
func loadModel(path string, p *pinFlags, prog *progress) (*graph.Model, error) {
	pins, err := p.pins()
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil {
		prog.start("loading "+path, st.Size())
	}
	m, err := graph.Load(path)
	prog.done()
	if err != nil {
		return nil, err
	}
	if err := pins.Apply(m.Graph); err != nil {
		return nil, &graph.InputError{File: path, Msg: err.Error()}
	}
	// Fused attention ops (and searches around them) that ONNX Runtime
	// refuses are bad input for every command, as on load.
	if err := passes.CheckRuntimeOps(m.Graph); err != nil {
		return nil, &graph.InputError{File: path, Msg: err.Error()}
	}
	return m, nil
}
