package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Cobra's errors carry no type, so each is typed where cobra hands it
// over: a bad flag through the flag error function, a wrong argument count
// through usageArgs around every command's Args; what a command's RunE
// returns goes through classify. An error with no type after all that
// came from cobra's command lookup: an unknown command.

// classifyCommands types the errors of root's commands and of cobra's
// parsing of their flags and arguments.
func classifyCommands(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	for _, c := range root.Commands() {
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
		if c.RunE != nil {
			c.RunE = classifiedRun(c.RunE)
		}
	}
}

// usageArgs makes a cobra argument check's error a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// classifiedRun leaves a command's typed errors as they are and makes any
// other an inputError.
func classifiedRun(run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error { return classify(run(c, args)) }
}

func classify(err error) error {
	var e exitError
	if err == nil || errors.As(err, &e) {
		return err
	}
	return inputError{err}
}

// unknownCommand is the usage error for an error Execute returned that no
// step above typed, which cobra's lookup of args' command gives. Its
// message is cobra's, on one line: cobra puts its suggestions on lines of
// their own.
func unknownCommand(root *cobra.Command, args []string, err error) error {
	var e exitError
	if err == nil || errors.As(err, &e) {
		return err
	}
	word := firstWord(args)
	if _, _, ferr := root.Find(args); ferr == nil || word == "" {
		return usageError{err} // not the lookup's: keep cobra's message
	}
	msg := fmt.Sprintf("unknown command %q for %q", word, root.CommandPath())
	if s := root.SuggestionsFor(word); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageError{errors.New(msg)}
}

// firstWord is the first argument that is not a flag: the command's name.
// The root's flags are all booleans, so none takes the next argument.
func firstWord(args []string) string {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}
