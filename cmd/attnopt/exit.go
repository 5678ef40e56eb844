package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/attnopt/attnopt/graph"
)

// Exit codes, in one place (docs/design.md §7).
const (
	exitOK       = 0
	exitFailed   = 1 // validation failed, or check found a site over budget
	exitBadInput = 2 // bad usage or bad input
	exitNoChecks = 3 // validate compared nothing, or could not check a site (CANNOT CHECK)
	// exitApproximate: validate measured an approximate site with no bound
	// to judge it by (APPROXIMATE, not a pass); give --max-error.
	exitApproximate = 4
)

// approximateError is a validation whose worst verdict is APPROXIMATE.
type approximateError struct{ msg string }

func (e *approximateError) Error() string { return e.msg }

// noChecksError is a validation that compared nothing, or could not check
// some site.
type noChecksError struct{ msg string }

func (e *noChecksError) Error() string { return e.msg }

// failedError carries exit code 1 with a message already printed or to print.
type failedError struct{ msg string }

func (e *failedError) Error() string { return e.msg }

// usageError is a bad flag or argument.
type usageError struct{ error }

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var fe *failedError
	if errors.As(err, &fe) {
		if fe.msg != "" {
			fmt.Fprintln(stderr, "attnopt:", fe.msg)
		}
		return exitFailed
	}
	var ae *approximateError
	if errors.As(err, &ae) {
		fmt.Fprintln(stderr, "attnopt:", ae.msg)
		return exitApproximate
	}
	var ne *noChecksError
	if errors.As(err, &ne) {
		fmt.Fprintln(stderr, "attnopt:", ne.msg)
		return exitNoChecks
	}
	var ue usageError
	if errors.As(err, &ue) || graph.IsInputError(err) {
		fmt.Fprintln(stderr, "attnopt:", err)
		return exitBadInput
	}
	// Anything else is also a problem with what we were given (I/O errors
	// on the input or output path); never a panic.
	fmt.Fprintln(stderr, "attnopt:", err)
	return exitBadInput
}
