package main

import (
	"io"

	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

type inspectOptions struct {
	model   string
	format  formatFlags
	explain bool
	prov    *report.Provenance
	pins    pinFlags
	out     io.Writer
	prog    *progress
}

func newInspectCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &inspectOptions{out: stdout}
	c := &cobra.Command{
		Use:   "inspect MODEL",
		Short: "List the attention sites of a model with their shapes and memory",
		Example: `  attnopt inspect model.onnx
  attnopt inspect model.onnx --dim batch=1 --dim seq=4096   # pin symbolic dims: the memory becomes a number
  attnopt inspect model.onnx --explain --json`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			o.model = args[0]
			o.prog = newProgress(stderr, quiet(c), true)
			o.prov = provenanceOf(c)
			return runInspect(o)
		},
	}
	o.format.register(c, " (JSON: schema "+report.InspectSchemaV1+", docs/reports.md)", report.Text, report.JSON)
	c.Flags().BoolVar(&o.explain, "explain", false, "say why each other Softmax is not a site")
	o.pins.register(c)
	return c
}

func runInspect(o *inspectOptions) error {
	f, err := o.format.resolve("")
	if err != nil {
		return err
	}
	m, err := loadModel(o.model, &o.pins, o.prog)
	if err != nil {
		return err
	}
	res := passes.FindSites(m.Graph)
	rep := report.NewInspect(o.model, m, res)
	rep.Provenance = o.prov
	return rep.WriteTo(o.out, f, o.explain, isTerminal(o.out))
}
