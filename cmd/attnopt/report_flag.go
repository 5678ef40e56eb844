package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/report"
	"github.com/attnopt/attnopt/validate"
	"github.com/spf13/cobra"
)

// reportFlag is rewrite's --report FILE: the format comes from the
// extension (.md, .json, .html, .txt), checked when the flag is parsed so a
// bad name is a usage error (exit 2) before any work. It snapshots the input
// before the rewrite changes it, keeps the validation when one runs, and
// writes the report atomically at the end, also when validation failed, so a
// pipeline keeps the evidence. It may be given more than once (one file
// per format). rewrite --json prints the same report.
type reportFlag struct {
	files   []reportFile
	before  *report.Snapshot
	valid   *validate.Report
	runtime *report.RuntimeInfo
	// library: the custom-op library that runs the output's attnopt ops
	// here (nil when it has none), which the report's runs-with line names.
	library *libraryFound
}

// reportFile is one --report FILE and the format its extension names.
type reportFile struct {
	path   string
	format report.Format
}

func (f *reportFlag) String() string {
	var ps []string
	for _, r := range f.files {
		ps = append(ps, r.path)
	}
	return strings.Join(ps, ",")
}
func (f *reportFlag) Type() string { return "FILE" }

func (f *reportFlag) Set(s string) error {
	fm, err := report.FormatForPath(s)
	if err != nil {
		return err
	}
	f.files = append(f.files, reportFile{s, fm})
	return nil
}

func (f *reportFlag) register(c *cobra.Command) {
	c.Flags().Var(f, "report", "also write a report of the rewrite (and of --validate) to FILE.{md,json,html,txt}; format from the extension; repeatable")
}

// snapshot records the input before the rewrite, when a report will be
// written (--report, or asJSON for --json); cheap (no tensor data).
func (f *reportFlag) snapshot(path string, m *graph.Model, asJSON bool) {
	if len(f.files) > 0 || asJSON {
		f.before = report.TakeSnapshot(path, m)
	}
}

// validated keeps the validation for the report.
func (f *reportFlag) validated(rep *validate.Report) { f.valid = rep }

// ran keeps the runtime the validation ran in.
func (f *reportFlag) ran(rt *report.RuntimeInfo) { f.runtime = rt }

// write renders the report of the finished rewrite to --report's file and,
// with --json, to jsonOut, and returns err, the outcome of the rewrite and
// its validation. No report is written when err is a failure that
// happened before any validation ran.
func (f *reportFlag) write(stdout, jsonOut io.Writer, prov *report.Provenance, out string, m *graph.Model, c *passes.Context, err error) error {
	if f.before == nil || (err != nil && f.valid == nil) {
		return err
	}
	rep := report.RewriteReport(f.before, out, m, c, f.valid)
	if f.valid != nil {
		prov = prov.WithRun(f.runtime, f.valid.Seed)
	}
	rep.SetProvenance(prov)
	if l := f.library; l != nil && l.err == nil {
		rep.SetCustomOps(l.path, l.content)
	}
	if jsonOut != nil {
		if rerr := report.Render(jsonOut, report.JSON, rep, report.RenderOptions{}); rerr != nil && err == nil {
			err = rerr
		}
	}
	for _, r := range f.files {
		var buf bytes.Buffer
		if rerr := report.Render(&buf, r.format, rep, report.RenderOptions{Aligned: true}); rerr != nil {
			return rerr
		}
		if werr := graph.WriteFileAtomic(r.path, buf.Bytes()); werr != nil {
			if err != nil {
				return err
			}
			return fmt.Errorf("writing report %s: %w", r.path, werr)
		}
		fmt.Fprintf(stdout, "report (%s): %s\n", r.format, r.path)
	}
	return err
}

// isTerminal reports whether w is a terminal (text tables are then
// aligned; in pipes and files they are tab-separated).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeOutput renders d to -o (atomically) or to stdout.
func writeOutput(stdout io.Writer, path string, f report.Format, d report.Document) error {
	if path == "" {
		return report.Render(stdout, f, d, report.RenderOptions{Aligned: isTerminal(stdout)})
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, f, d, report.RenderOptions{Aligned: f == report.Text}); err != nil {
		return err
	}
	if err := graph.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
