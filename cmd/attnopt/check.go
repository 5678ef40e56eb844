package main

import (
	"fmt"
	"io"

	"github.com/attnopt/attnopt/internal/units"
	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

type checkOptions struct {
	model  string
	budget string
	format formatFlags
	strict bool
	prov   *report.Provenance
	pins   pinFlags
	out    io.Writer
	prog   *progress
}

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &checkOptions{out: stdout}
	c := &cobra.Command{
		Use:   "check MODEL --memory-budget SIZE",
		Short: "Fail (exit 1) when an unfused attention site's score tensor exceeds a memory budget",
		Long: "Lists every unfused attention site of MODEL with its score tensor (B·H·Nq·Nk·e bytes) and\n" +
			"exits 1 naming the sites whose score tensor exceeds SIZE (per site); 0 otherwise, so a\n" +
			"model whose sites are all fused passes. SIZE: 16GiB, 512MiB, 1.5GB, 4G or a byte count.\n" +
			"A site whose size depends on a symbolic dim is reported as unknown and passes, unless\n" +
			"--strict; pin the dim with --dim SYM=N or --shape NAME=DIMS to check it.",
		Example: `  attnopt check model.onnx --memory-budget 16GiB
  attnopt check model.onnx --memory-budget 512MiB --dim seq=8192 --strict`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			o.model = args[0]
			o.prog = newProgress(stderr, quiet(c), true)
			o.prov = provenanceOf(c)
			return runCheck(o)
		},
	}
	c.Flags().StringVar(&o.budget, "memory-budget", "", "largest score tensor allowed per site (required): 16GiB, 512MiB, 1.5GB, 1000000")
	o.format.register(c, " (JSON: schema "+report.CheckSchemaV1+")", report.Formats...)
	c.Flags().BoolVar(&o.strict, "strict", false, "also fail on sites whose size is unknown (symbolic dims)")
	o.pins.register(c)
	return c
}

func runCheck(o *checkOptions) error {
	if o.budget == "" {
		return usageError{fmt.Errorf("check needs --memory-budget SIZE (e.g. 16GiB)")}
	}
	// The same size syntax as rewrite's --memory-budget.
	budget, err := units.ParseSize(o.budget)
	if err == nil && budget < 1 {
		err = fmt.Errorf("size %q: the budget must be at least 1 byte", o.budget)
	}
	if err != nil {
		return usageError{fmt.Errorf("--memory-budget: %w", err)}
	}
	f, err := o.format.resolve("")
	if err != nil {
		return err
	}
	m, err := loadModel(o.model, &o.pins, o.prog)
	if err != nil {
		return err
	}
	c := report.NewCheck(o.model, m, budget, o.strict)
	c.Provenance = o.prov
	if err := writeOutput(o.out, "", f, c); err != nil {
		return err
	}
	if !c.Pass {
		return &failedError{msg: c.Failure()}
	}
	return nil
}
