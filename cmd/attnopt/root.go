package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/attnopt/attnopt/internal/version"
	"github.com/spf13/cobra"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "attnopt",
		Short: "Find attention in ONNX models and fuse it into memory-efficient ops",
		Example: `  attnopt inspect model.onnx                     # the attention sites and their memory
  attnopt rewrite model.onnx --validate          # fuse them into model.attnopt.onnx, check the numbers
  attnopt check model.onnx --memory-budget 16GiB`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().Bool("quiet", false, "no progress output")
	root.Version = version.Get().String()
	root.SetVersionTemplate("attnopt {{.Version}}\n")
	root.AddCommand(newInspectCmd(stdout, stderr), newRewriteCmd(stdout, stderr), newValidateCmd(stdout, stderr))
	root.AddCommand(newDiffCmd(stdout, stderr), newCheckCmd(stdout, stderr), newVersionCmd(stdout, stderr))
	classifyCommands(root)
	return root
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	// Models are mapped, not copied (graph/decode.go): a file truncated by
	// someone else while we read it faults, which this turns into a panic
	// that guard reports instead of a crash.
	debug.SetPanicOnFault(true)
	defer guard(args, stderr, &code)
	return exitCode(execute(args, stdout, stderr), stderr)
}

// execute runs one command line; its error, if any, is an exitError.
func execute(args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(withArgs(context.Background(), args))
	return unknownCommand(root, args, err)
}

func quiet(c *cobra.Command) bool {
	q, _ := c.Flags().GetBool("quiet")
	return q
}

// guard turns a panic into one line naming the files and saying it is a
// bug of ours, exit 2: a pipeline must not see a crash dump.
func guard(args []string, stderr io.Writer, code *int) {
	if r := recover(); r != nil {
		// A fault past the first page is a mapped file that shrank; one
		// near address 0 is a nil dereference, a bug.
		if e, ok := r.(interface{ Addr() uintptr }); ok && e.Addr() >= 4096 {
			fmt.Fprintf(stderr, "attnopt: %s: the file changed while attnopt was reading it (%v)\n", strings.Join(fileArgs(args), ", "), r)
			*code = exitBadInput
			return
		}
		fmt.Fprintf(stderr, "attnopt: %s: internal error (a bug in attnopt; please report it with this file): %v\n", strings.Join(fileArgs(args), ", "), r)
		*code = exitBadInput
	}
}

// fileArgs are the arguments that name existing files (the models a
// command was reading), for the message of a bug.
func fileArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if st, err := os.Stat(a); err == nil && !st.IsDir() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = []string{"(no file)"}
	}
	return out
}
