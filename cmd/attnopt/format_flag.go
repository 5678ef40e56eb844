package main

import (
	"fmt"
	"strings"

	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

// formatFlags are --format and --json (the same as --format json), which
// every command that prints a document takes.
type formatFlags struct {
	format  string
	json    bool
	allowed []report.Format
}

func (f *formatFlags) register(c *cobra.Command, help string, allowed ...report.Format) {
	f.allowed = allowed
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	c.Flags().StringVar(&f.format, "format", "", strings.Join(names, ", ")+help)
	c.Flags().BoolVar(&f.json, "json", false, "print JSON (the same as --format json)")
}

// resolve is the format asked for: --json, --format, else the extension
// of out (when the command writes a file), else text.
func (f *formatFlags) resolve(out string) (report.Format, error) {
	var fm report.Format
	switch {
	case f.json && f.format != "" && !strings.EqualFold(f.format, "json"):
		return "", usageError{fmt.Errorf("--json and --format %s disagree; give one", f.format)}
	case f.json:
		fm = report.JSON
	case f.format != "":
		var err error
		if fm, err = report.ParseFormat(f.format); err != nil {
			return "", usageError{err}
		}
	case out != "":
		var err error
		if fm, err = report.FormatForPath(out); err != nil {
			return "", usageError{err}
		}
	default:
		fm = report.Text
	}
	for _, a := range f.allowed {
		if a == fm {
			return fm, nil
		}
	}
	names := make([]string, len(f.allowed))
	for i, a := range f.allowed {
		names[i] = string(a)
	}
	return "", usageError{fmt.Errorf("--format %s: want %s", fm, strings.Join(names, ", "))}
}
