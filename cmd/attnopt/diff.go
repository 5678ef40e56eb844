package main

import (
	"io"

	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	a, b   string
	format formatFlags
	output string
	prov   *report.Provenance
	pins   pinFlags
	out    io.Writer
	prog   *progress
}

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &diffOptions{out: stdout}
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two models: signatures, ops, nodes, initializers, opsets and attention sites",
		Long: "Compares model A with model B — any two models, e.g. an original and its rewrite or two\n" +
			"exports of one model: inputs and outputs, op counts, nodes and initializers removed, added\n" +
			"or changed, opsets, and each attention site of A with its memory before and after.\n" +
			"A model compared with itself reports \"no change\". The exit code is 0 whether or not the\n" +
			"models differ (2 for bad input). Formats: text (aligned on a terminal, tab-separated\n" +
			"otherwise), md, json (schema attnopt.report/v1) and html (one self-contained file).\n" +
			"Without --format the format of -o FILE follows its extension; otherwise text.",
		Example: `  attnopt diff model.onnx model.attnopt.onnx
  attnopt diff model.onnx model.attnopt.onnx -o diff.html`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			o.a, o.b = args[0], args[1]
			o.prog = newProgress(stderr, quiet(c), true)
			o.prov = provenanceOf(c)
			return runDiff(o)
		},
	}
	o.format.register(c, " (default: from -o's extension, else text)", report.Formats...)
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	o.pins.register(c)
	return c
}

func runDiff(o *diffOptions) error {
	f, err := o.format.resolve(o.output)
	if err != nil {
		return err
	}
	a, err := loadModel(o.a, &o.pins, o.prog)
	if err != nil {
		return err
	}
	b, err := loadModel(o.b, &o.pins, o.prog)
	if err != nil {
		return err
	}
	rep := report.DiffModels(o.a, a, o.b, b)
	rep.SetProvenance(o.prov)
	return writeOutput(o.out, o.output, f, rep)
}
