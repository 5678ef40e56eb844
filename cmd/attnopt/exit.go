package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// Exit codes, in one place (docs/cli.md, "Exit codes"; exitCodes below).
const (
	exitOK       = 0
	exitFailed   = 1 // validation failed, or check found a site over budget
	exitBadInput = 2 // bad usage or bad input
	exitNoChecks = 3 // validate compared nothing, or could not check a site (CANNOT CHECK)
	// exitApproximate: validate measured an approximate site with no bound
	// to judge it by (APPROXIMATE, not a pass); give --max-error.
	exitApproximate = 4
	// exitInterrupted and exitTerminated: 128 + the signal (signals.go).
	exitInterrupted = 128 + int(syscall.SIGINT)
	exitTerminated  = 128 + int(syscall.SIGTERM)
)

// exitCodes says what each code means, for users: docs/cli.md and
// docs/design.md carry it as the table exitCodesTable renders, between
// <!-- exit-codes --> markers, and exit_docs_test.go fails when a copy
// differs (go test ./cmd/attnopt -run TestExitCodeDocs -update rewrites
// them).
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "success; also a `rewrite` with nothing to fuse and a `diff` of models that differ"},
	{exitFailed, "`validate` (or `rewrite --validate`) found an output out of tolerance (`FAIL`), or `check` found a site (its scores) or a fused op (what it adds) over the budget"},
	{exitBadInput, "bad usage or bad input, one line on stderr naming the file and the fault: not ONNX (a PyTorch checkpoint, safetensors file or TorchScript archive is named as such), truncated, unsafe external data, a runtime asked for and not found…; a bug in attnopt says so, also exit 2"},
	{exitNoChecks, "`validate --scope sites` found no rewritten site to compare (`NO CHECKS`), or the checker could not run a check, for a reason that is not the rewrite's (`CANNOT CHECK`: an op the runtime lacks, an original that does not run on the generated inputs, a large site that runs neither reduced nor whole within 2 GiB)"},
	{exitApproximate, "an approximate site validated without a bound (`APPROXIMATE (not a pass)`): give `--max-error`; `validate` and `rewrite` alike"},
	{exitInterrupted, "interrupted (SIGINT); temporary files removed"},
	{exitTerminated, "terminated (SIGTERM); temporary files removed"},
}

// exitCodesTable is exitCodes as a Markdown table.
func exitCodesTable() string {
	var b strings.Builder
	b.WriteString("| exit | meaning |\n|---|---|\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, "| %d | %s |\n", e.code, e.meaning)
	}
	return b.String()
}

// An exitError is an error that knows its exit code. Every error run sees
// is one: commands' errors are classified as they return and cobra's where
// cobra hands them over (classified.go), so exitCode reads the code off
// the error's type and never its text.
type exitError interface {
	error
	exitCode() int
}

// usageError is a bad command, flag or argument.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }
func (usageError) exitCode() int   { return exitBadInput }

// inputError is any other problem with what a command was given: a model
// that does not load (a *graph.InputError, which it wraps), one its target
// refuses, an output that cannot be written, a runtime that does not load.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }
func (inputError) exitCode() int   { return exitBadInput }

// failedError is a failed validation or check; its message is the line
// naming what failed, or empty when that was already printed.
type failedError struct{ msg string }

func (e *failedError) Error() string { return e.msg }
func (*failedError) exitCode() int   { return exitFailed }

// noChecksError is a validation that compared nothing, or could not check
// some site.
type noChecksError struct{ msg string }

func (e *noChecksError) Error() string { return e.msg }
func (*noChecksError) exitCode() int   { return exitNoChecks }

// approximateError is a validation whose worst verdict is APPROXIMATE.
type approximateError struct{ msg string }

func (e *approximateError) Error() string { return e.msg }
func (*approximateError) exitCode() int   { return exitApproximate }

// exitCode prints err's one line (unless it is empty) and returns its code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "attnopt:", msg)
	}
	var e exitError
	if errors.As(err, &e) {
		return e.exitCode()
	}
	// Unreachable (run classifies every error); never a panic either way.
	return exitBadInput
}
