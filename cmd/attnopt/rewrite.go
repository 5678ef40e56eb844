package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/units"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/report"
	"github.com/attnopt/attnopt/validate"
	"github.com/spf13/cobra"
)

type rewriteOptions struct {
	model      string
	output     string
	target     string
	explain    bool
	verifyEach bool
	validate   bool
	json       bool
	runtime    runtimeFlags
	minScores  string
	pins       pinFlags
	report     reportFlag
	approx     approxFlags
	out        io.Writer
	stdout     io.Writer // out is io.Discard under --json
	prov       *report.Provenance
	prog       *progress
}

func newRewriteCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &rewriteOptions{out: stdout, stdout: stdout}
	c := &cobra.Command{
		Use:   "rewrite MODEL",
		Short: "Fuse every attention site into one memory-efficient op",
		Long: "Rewrites each MatMul→Softmax→MatMul attention site into a fused op and writes\n" +
			"MODEL.attnopt.onnx beside the input (the input is never modified).\n" +
			noSitesHelp + "\nTargets (--target):\n" + targetsHelp(),
		Example: `  attnopt rewrite model.onnx                     # writes model.attnopt.onnx
  attnopt rewrite model.onnx -o fused.onnx --validate --report report.html
  attnopt rewrite model.onnx --target ort        # stock ONNX Runtime's MultiHeadAttention, no custom-op library
  attnopt rewrite model.onnx --memory-budget 16GiB --allow-approx`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			o.model = args[0]
			o.prog = newProgress(stderr, quiet(c), !o.json)
			o.prov = provenanceOf(c)
			if o.json {
				o.out = io.Discard
			}
			return runRewrite(o)
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "", "output path (default MODEL.attnopt.onnx)")
	c.Flags().StringVar(&o.target, "target", "attnopt", "fused op: "+strings.Join(passes.TargetNames(), ", "))
	c.Flags().BoolVar(&o.explain, "explain", false, "also say why each other Softmax was not fused")
	c.Flags().BoolVar(&o.verifyEach, "verify-each", false, "run the graph verifier after every pass")
	c.Flags().BoolVar(&o.validate, "validate", false, "validate every rewritten site on seeded inputs; exit 1 if one fails")
	c.Flags().BoolVar(&o.json, "json", false, "print the rewrite report as JSON (schema "+report.SchemaV1+") instead of the text lines")
	o.runtime.register(c)
	c.Flags().StringVar(&o.minScores, "min-scores", defaultMinScores, "leave exact sites whose score tensor is smaller alone, e.g. 64KiB; 0 fuses every site")
	o.pins.register(c)
	o.report.register(c)
	o.approx.register(c)
	return c
}

// noSitesHelp is what rewrite does when it fuses nothing (docs/cli.md).
const noSitesHelp = "When no site is fused, nothing is written and the output says so (exit 0); with\n" +
	"-o FILE the model is written there unchanged, as asked."

// targetsHelp lists the targets from their table (passes/lower/target.go):
// one line each, the name, the op it writes and what runs it.
func targetsHelp() string {
	var b strings.Builder
	for _, name := range passes.TargetNames() {
		t, _ := passes.TargetByName(name)
		fmt.Fprintf(&b, "  %-8s %s: %s\n", name, t.Op(), t.Summary())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// defaultOutput is MODEL.attnopt.onnx beside the input.
func defaultOutput(model string) string {
	ext := filepath.Ext(model)
	return strings.TrimSuffix(model, ext) + ".attnopt.onnx"
}

// defaultMinScores: sites with smaller scores gain nothing from fusing
// (README.md, "Small sites": a 17-token ViT's 4.5 KiB sites ran 1.08x
// slower fused).
const defaultMinScores = "16KiB"

func runRewrite(o *rewriteOptions) error {
	if _, err := passes.TargetByName(o.target); err != nil {
		return usageError{err}
	}
	if _, err := o.runtime.mode(); err != nil {
		return err
	}
	minScores, err := units.ParseSize(o.minScores)
	if err != nil {
		return usageError{fmt.Errorf("--min-scores: %w", err)}
	}
	out := o.output
	if out == "" {
		out = defaultOutput(o.model)
	}
	if same, _ := sameFile(o.model, out); same {
		return usageError{fmt.Errorf("output %s is the input; attnopt never modifies its input", out)}
	}
	if err := checkOutputPath("output", out); err != nil {
		return err
	}
	writes := []outputFile{{"output", out}}
	for _, r := range o.report.files {
		if err := checkOutputPath("--report", r.path); err != nil {
			return err
		}
		if samePath(r.path, out) {
			return usageError{fmt.Errorf("--report %s is the output model", r.path)}
		}
		writes = append(writes, outputFile{"--report", r.path})
	}
	m, err := loadModel(o.model, &o.pins, o.prog)
	if err != nil {
		return err
	}
	dataFile := filepath.Join(filepath.Dir(out), graph.DataFileName(out))
	writes = append(writes, outputFile{"the output's data file", dataFile})
	if err := checkNoOverwrite(o.model, m, writes); err != nil {
		return err
	}
	if err := m.CheckCarry(filepath.Dir(out)); err != nil {
		var ie *graph.InputError
		if !errors.As(err, &ie) {
			return err
		}
		return &graph.InputError{File: o.model, Msg: ie.Msg, Err: err}
	}
	o.report.snapshot(o.model, m, o.json)
	approx, err := o.approx.options()
	if err != nil {
		return err
	}
	if o.approx.maxError > 0 {
		pins, _ := o.pins.pins()
		var notes []string
		if approx, notes, err = backOff(o, approx, pins); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintln(o.out, n)
		}
	}
	o.prog.begin("rewriting " + o.model)
	ctx, err := passes.Rewrite(m, passes.Options{Target: o.target, VerifyEach: o.verifyEach, Approx: approx, MinScores: minScores})
	o.prog.done()
	if err != nil {
		var me *passes.ModelError
		if errors.As(err, &me) {
			return &graph.InputError{File: o.model, Msg: me.Msg, Err: err}
		}
		return fmt.Errorf("%s: %w", o.model, err)
	}
	if ctx.FusedCount() == 0 && o.output == "" {
		// Nothing to rewrite: a copy beside the input would only be a
		// second file to mistake for a rewrite. An explicit -o is a
		// promise to a pipeline that the file will exist, so it is kept.
		report.WriteRewrite(o.out, report.NewRewrite(o.model, "", ctx, graph.SaveResult{}), o.explain)
		writePlans(o.out, ctx, approx.MemoryBudget > 0)
		return o.report.write(o.out, o.jsonOut(), o.prov, "", m, ctx, nil)
	}
	// Copying external data into the output's own file can take minutes.
	o.prog.begin("writing " + out)
	res, err := m.Save(out)
	o.prog.done()
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	report.WriteRewrite(o.out, report.NewRewrite(o.model, out, ctx, res), o.explain)
	if res.Externalized {
		fmt.Fprintf(o.out, "the output is over protobuf's 2 GiB limit, which ONNX Runtime cannot parse: initializers of 1 KiB and more were moved to %s\n", res.DataFile)
	}
	writePlans(o.out, ctx, approx.MemoryBudget > 0)
	if m.Opset("attnopt") > 0 {
		l := findLibrary(o.runtime.customOps)
		o.report.library = &l
		fmt.Fprintln(o.out, l.line())
	}
	// Approximate sites are always validated: their error is part of the result.
	// and so is every site of a budgeted rewrite (the plan's measured error).
	if (!o.validate && !hasApprox(ctx) && approx.MemoryBudget == 0) || ctx.FusedCount() == 0 {
		return o.report.write(o.out, o.jsonOut(), o.prov, out, m, ctx, nil)
	}
	verdict, err := validateRewrite(o, out)
	err = o.report.write(o.out, o.jsonOut(), o.prov, out, m, ctx, err)
	// The validation's table and verdict come last, once every file is
	// written: a CI log that shows the verdict shows a finished command.
	verdict()
	return err
}

// jsonOut is where --json prints the report (nil without --json).
func (o *rewriteOptions) jsonOut() io.Writer {
	if o.json {
		return o.stdout
	}
	return nil
}

// validateRewrite checks the written model against the input, site by
// site; verdict prints the runtime, the table and the verdict.
func validateRewrite(o *rewriteOptions, out string) (verdict func(), err error) {
	verdict = func() {}
	orig, err := loadModel(o.model, &o.pins, o.prog)
	if err != nil {
		return verdict, err
	}
	rew, err := loadModel(out, &o.pins, o.prog)
	if err != nil {
		return verdict, err
	}
	runner, rt, err := o.runtime.choose(rew)
	if err != nil {
		return verdict, err
	}
	o.report.ran(rt)
	pins, _ := o.pins.pins()
	o.prog.begin("validating " + out)
	rep := validate.Validate(orig, rew, runner, validate.Options{Seed: 1, Dims: pins.Dims, MaxError: o.approx.maxError,
		Progress: func(done, total int, what string) { o.prog.step(done, total, what) }})
	o.prog.done()
	rep.Original, rep.Rewritten = o.model, out
	o.report.validated(rep)
	verdict = func() {
		writeRuntime(o.out, rt)
		report.WriteValidationTable(o.out, rep, isTerminal(o.out))
	}
	// The file is written either way; the exit code is the verdict's, as
	// for validate (an approximate site without --max-error exits 4).
	return verdict, verdictError(rep, o.model, out)
}
