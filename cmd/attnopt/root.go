package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "attnopt",
		Short:         "Find attention in ONNX models and fuse it into memory-efficient ops",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().Bool("quiet", false, "no progress output")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newInspectCmd(stdout, stderr), newRewriteCmd(stdout, stderr), newValidateCmd(stdout, stderr))
	root.AddCommand(newDiffCmd(stdout, stderr), newCheckCmd(stdout, stderr))
	return root
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		// A bug must not look like a crash dump to a pipeline: one line, exit 2.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "attnopt: internal error: %v\n", r)
			code = exitBadInput
		}
	}()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && isCobraUsage(err) {
		err = usageError{err}
	}
	return exitCode(err, stderr)
}

// isCobraUsage recognises cobra's own argument and command errors.
func isCobraUsage(err error) bool {
	switch err.(type) {
	case usageError, *failedError:
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func quiet(c *cobra.Command) bool {
	q, _ := c.Flags().GetBool("quiet")
	return q
}
