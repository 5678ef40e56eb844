package main

import (
	"io"

	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

type inspectOptions struct {
	model   string
	json    bool
	explain bool
	pins    pinFlags
	out     io.Writer
	prog    *progress
}

func newInspectCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &inspectOptions{out: stdout}
	c := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "List the attention sites of a model with their shapes and memory",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.model = args[0]
			o.prog = newProgress(stderr, quiet(c))
			return runInspect(o)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON (DESIGN.md §7)")
	c.Flags().BoolVar(&o.explain, "explain", false, "say why each other Softmax is not a site")
	o.pins.register(c)
	return c
}

func runInspect(o *inspectOptions) error {
	m, err := loadModel(o.model, &o.pins, o.prog)
	if err != nil {
		return err
	}
	res := passes.FindSites(m.Graph)
	rep := report.NewInspect(o.model, m, res)
	f := report.Text
	if o.json {
		f = report.JSON
	}
	return rep.Write(o.out, f, o.explain)
}
