package main

import (
	"io"

	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	a, b   string
	format string
	output string
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
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o.a, o.b = args[0], args[1]
			o.prog = newProgress(stderr, quiet(c))
			return runDiff(o)
		},
	}
	c.Flags().StringVar(&o.format, "format", "", "text, md, json or html (default: from -o's extension, else text)")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	o.pins.register(c)
	return c
}

func runDiff(o *diffOptions) error {
	f := report.Text
	switch {
	case o.format != "":
		var err error
		if f, err = report.ParseFormat(o.format); err != nil {
			return usageError{err}
		}
	case o.output != "":
		var err error
		if f, err = report.FormatForPath(o.output); err != nil {
			return usageError{err}
		}
	}
	a, err := loadModel(o.a, &o.pins, o.prog)
	if err != nil {
		return err
	}
	b, err := loadModel(o.b, &o.pins, o.prog)
	if err != nil {
		return err
	}
	return writeOutput(o.out, o.output, f, report.DiffModels(o.a, a, o.b, b))
}
