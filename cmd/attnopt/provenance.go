package main

import (
	"context"

	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

// argsKey carries the command line to the commands, for provenance.
type argsKey struct{}

func withArgs(ctx context.Context, args []string) context.Context {
	return context.WithValue(ctx, argsKey{}, args)
}

// provenanceOf is what the documents of command c record about the run.
func provenanceOf(c *cobra.Command) *report.Provenance {
	args, _ := c.Context().Value(argsKey{}).([]string)
	return report.NewProvenance(args)
}
