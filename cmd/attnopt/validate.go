package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/attnopt/attnopt/eval"

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
	maxError            float64
	inputs              string
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
			"exit 3 when --scope sites finds no rewritten site to compare (NO CHECKS) or the checker\n" +
			"cannot run a check for a reason that is not the rewrite's (CANNOT CHECK); exit 4 when an approximate (windowed or pooled)\n" +
			"site has no bound: --max-error, or the one its rewrite recorded (APPROXIMATE, not a pass).\n" +
			"Inputs are generated from what the graph does with each: masks with left and right padding,\n" +
			"a fully masked row and none, ids within their tables, lengths within their ranges;\n" +
			"--inputs FILE.npz adds the user's own (docs/validate.md).\n" +
			"Sites inside If/Loop bodies and decoder subgraphs are checked, in either scope, by running\n" +
			"each rewritten subgraph alone against its original (every If branch), or both whole models\n" +
			"when a subgraph cannot run alone.\n" +
			"Runtime (--runtime auto, the default): ONNX Runtime, with attnopt's custom-op library for\n" +
			"attnopt ops, when both are found (--ort-lib, $ORT_LIB, the Python environment's onnxruntime,\n" +
			"the system; --custom-ops, $ATTNOPT_CUSTOM_OPS, the attnopt wheel), else the pure-Go runtime;\n" +
			"the first line printed says which runtime and libraries ran.",
		Example: `  attnopt validate model.onnx model.attnopt.onnx
  attnopt validate model.onnx model.attnopt.onnx --scope model --runtime go
  attnopt validate model.onnx model.attnopt.onnx --inputs inputs.npz --json`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			o.original, o.rewritten = args[0], args[1]
			o.prog = newProgress(stderr, quiet(c), !o.format.json && o.format.format != "json")
			o.prov = provenanceOf(c)
			return runValidate(o)
		},
	}
	c.Flags().StringVar(&o.scope, "scope", "sites", "sites or model")
	c.Flags().Int64Var(&o.seed, "seed", 1, "seed of the random inputs")
	c.Flags().Float64Var(&o.atol, "atol", 0, "absolute tolerance (default by dtype)")
	c.Flags().Float64Var(&o.rtol, "rtol", 0, "relative tolerance")
	c.Flags().Float64Var(&o.maxError, "max-error", 0, "largest max abs error an approximate site may have (without it an approximate site is exit 4; a bound the file records is shown, not used)")
	c.Flags().StringVar(&o.inputs, "inputs", "", "a .npz file of the original's inputs (numpy.savez), run as one more case")
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
	if o.maxError < 0 || math.IsNaN(o.maxError) || math.IsInf(o.maxError, 0) {
		return usageError{fmt.Errorf("--max-error %g: want a positive number", o.maxError)}
	}
	var inputs map[string]*eval.Tensor
	if o.inputs != "" {
		if inputs, err = validate.ReadNPZ(o.inputs); err != nil {
			return err
		}
		if err := validate.CheckInputs(orig, inputs, o.inputs); err != nil {
			return usageError{err}
		}
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
	o.prog.begin(fmt.Sprintf("validating %s (--scope %s)", o.rewritten, o.scope))
	rep := validate.Validate(orig, rew, runner, validate.Options{
		Scope: o.scope, Seed: o.seed, Atol: o.atol, Rtol: o.rtol, Dims: pins.Dims,
		MaxError: o.maxError, Inputs: inputs, InputsName: filepath.Base(o.inputs),
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
	return verdictError(rep, o.original, o.rewritten)
}

// verdictError maps a validation's verdict to its exit code: PASS 0, FAIL
// 1, NO CHECKS and CANNOT CHECK 3, APPROXIMATE 4 (exit.go).
func verdictError(rep *validate.Report, original, rewritten string) error {
	switch rep.Verdict {
	case validate.Pass:
		return nil
	case validate.NoChecks:
		return &noChecksError{msg: fmt.Sprintf("%s: no attention site of %s was rewritten; nothing to validate", rewritten, original)}
	case validate.CannotCheck:
		for _, c := range rep.Checks {
			if c.Verdict == validate.CannotCheck {
				return &noChecksError{msg: fmt.Sprintf("cannot check %s: %s", c.Name, c.Error)}
			}
		}
	case validate.Approximate:
		for _, c := range rep.Checks {
			if c.Verdict == validate.Approximate {
				return &approximateError{msg: fmt.Sprintf("%s is approximate (max abs error %s) and has no bound: not a pass; give --max-error", c.Name, worstError(c))}
			}
		}
	}
	return &failedError{msg: failureLine(rep)}
}

// worstError is the largest max abs error of a check's outputs.
func worstError(c validate.Check) string {
	w := 0.0
	for _, m := range c.Outputs {
		w = max(w, m.MaxAbs)
	}
	return fmt.Sprintf("%.3g", w)
}

// failureLine names the first failing check and output for stderr.
func failureLine(rep *validate.Report) string {
	for _, c := range rep.Checks {
		if c.Verdict != validate.Fail {
			continue
		}
		if c.Error != "" {
			return fmt.Sprintf("validation failed: %s: %s", c.Name, c.Error)
		}
		for _, m := range c.Outputs {
			if !m.Pass {
				return fmt.Sprintf("validation failed: %s: output %q %s at %v%s", c.Name, m.Output, failureOf(m), m.WorstIndex, caseOf(m))
			}
		}
	}
	return "validation failed"
}

// failureOf says how an output failed.
func failureOf(m validate.Metrics) string {
	switch {
	case m.NaNs > 0:
		return fmt.Sprintf("has %d NaN/Inf where the original is finite (max abs error %.3g)", m.NaNs, m.MaxAbs)
	case m.Lost > 0:
		return fmt.Sprintf("is finite at %d positions where the original is NaN/Inf (max abs error %.3g)", m.Lost, m.MaxAbs)
	}
	return fmt.Sprintf("max abs error %.3g > %.3g", m.MaxAbs, m.Atol)
}

func caseOf(m validate.Metrics) string {
	if m.Case == "" {
		return ""
	}
	return " (case " + m.Case + ")"
}
