package main

import (
	"fmt"
	"io"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/report"
	"github.com/attnopt/attnopt/validate"
	"github.com/spf13/cobra"
)

type validateOptions struct {
	original, rewritten string
	runtime             runtimeFlags
	scope               string
	seed                int64
	atol, rtol          float64
	format              formatFlags
	pins                pinFlags
	prov                *report.Provenance
	out                 io.Writer
	prog                *progress
}

func newValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &validateOptions{out: stdout}
	c := &cobra.Command{
		Use:   "validate ORIGINAL REWRITTEN",
		Short: "Compare a rewritten model with its original on seeded random inputs",
		Long: "Runs each rewritten site alone (--scope sites, the default) or both models end to end\n" +
			"(--scope model) on seeded random inputs and compares the outputs: max abs/rel error,\n" +
			"mean abs error, cosine similarity, worst index, NaN/Inf. Exit 1 when any output is\n" +
			"outside tolerance (fp32 1e-4, fp16 2e-2, bf16 5e-2 absolute unless --atol/--rtol);\n" +
			"exit 3 when --scope sites finds no rewritten site to compare (nothing was validated).\n" +
			"Sites inside If/Loop bodies and decoder subgraphs are checked, in either scope, by running\n" +
			"each rewritten subgraph alone against its original (every If branch), or both whole models\n" +
			"when a subgraph cannot run alone.\n" +
			"Runtime (--runtime auto, the default): ONNX Runtime, with attnopt's custom-op library for\n" +
			"attnopt ops, when both are found (--ort-lib, $ORT_LIB, the Python environment's onnxruntime,\n" +
			"the system; --custom-ops, $ATTNOPT_CUSTOM_OPS, the attnopt wheel), else the pure-Go runtime;\n" +
			"the first line printed says which runtime and libraries ran.",
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			o.original, o.rewritten = args[0], args[1]
			o.prog = newProgress(stderr, quiet(c) || o.format.json || o.format.format == "json")
			o.prov = provenanceOf(c)
			return runValidate(o)
		},
	}
	c.Flags().StringVar(&o.scope, "scope", "sites", "sites or model")
	c.Flags().Int64Var(&o.seed, "seed", 1, "seed of the random inputs")
	c.Flags().Float64Var(&o.atol, "atol", 0, "absolute tolerance (default by dtype)")
	c.Flags().Float64Var(&o.rtol, "rtol", 0, "relative tolerance")
	o.runtime.register(c)
	o.format.register(c, " (JSON: schema "+report.ValidateSchemaV1+")", report.Text, report.JSON)
	o.pins.register(c)
	return c
}

func runValidate(o *validateOptions) error {
	if o.scope != "sites" && o.scope != "model" {
		return usageError{fmt.Errorf("--scope %q: want sites or model", o.scope)}
	}
	f, err := o.format.resolve("")
	if err != nil {
		return err
	}
	if _, err := o.runtime.mode(); err != nil {
		return err
	}
	orig, err := loadModel(o.original, &o.pins, o.prog)
	if err != nil {
		return err
	}
	rew, err := loadModel(o.rewritten, &o.pins, o.prog)
	if err != nil {
		return err
	}
	runner, rt, err := o.runtime.choose(rew)
	if err != nil {
		return err
	}
	pins, _ := o.pins.pins()
	if o.scope == "model" {
		// Refused before any run: the alternative is an out-of-memory kill.
		for _, f := range []struct {
			path string
			m    *graph.Model
		}{{o.original, orig}, {o.rewritten, rew}} {
			if err := validate.CheckModelScope(f.m, pins.Dims); err != nil {
				return usageError{fmt.Errorf("%s: %w", f.path, err)}
			}
		}
	}
	rep := validate.Validate(orig, rew, runner, validate.Options{
		Scope: o.scope, Seed: o.seed, Atol: o.atol, Rtol: o.rtol, Dims: pins.Dims,
		Progress: func(done, total int, what string) { o.prog.step(done, total, what) },
	})
	o.prog.done()
	rep.Original, rep.Rewritten = o.original, o.rewritten
	if f == report.JSON {
		if err := report.WriteJSON(o.out, report.NewValidationDoc(rep, o.prov.WithRun(rt, o.seed))); err != nil {
			return err
		}
	} else {
		writeRuntime(o.out, rt)
		report.WriteValidationTable(o.out, rep, isTerminal(o.out))
	}
	if rep.NoChecks {
		return &noChecksError{msg: fmt.Sprintf("%s: no attention site of %s was rewritten; nothing to validate", o.rewritten, o.original)}
	}
	if !rep.Pass {
		return &failedError{msg: failureLine(rep)}
	}
	return nil
}

// failureLine names the first failing check and output for stderr.
func failureLine(rep *validate.Report) string {
	for _, c := range rep.Checks {
		if c.Pass {
			continue
		}
		if c.Error != "" {
			return fmt.Sprintf("validation failed: %s: %s", c.Name, c.Error)
		}
		for _, m := range c.Outputs {
			if !m.Pass {
				return fmt.Sprintf("validation failed: %s: output %q max abs error %.3g > %.3g at %v", c.Name, m.Output, m.MaxAbs, m.Atol, m.WorstIndex)
			}
		}
	}
	return "validation failed"
}
