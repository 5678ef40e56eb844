package graph

import (
	"errors"
	"fmt"
)

// InputError marks a problem with the model file itself (not ONNX, truncated,
// inconsistent, unsafe external data…). The CLI maps it to exit code 2.
// Err is the cause when there is one (an *os.PathError from reading the
// file): Msg already says it, and Unwrap keeps it reachable, so callers can
// ask errors.Is(err, fs.ErrNotExist) of what Load returns.
type InputError struct {
	File string
	Msg  string
	Err  error
}

// Unwrap returns the cause (nil when the message is the whole story).
func (e *InputError) Unwrap() error { return e.Err }

func (e *InputError) Error() string {
	if e.File == "" {
		return e.Msg
	}
	return e.File + ": " + e.Msg
}

func badInput(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// badInputCause is badInput keeping err as the cause.
func badInputCause(err error, format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...), Err: err}
}

// IsInputError reports whether err (or anything it wraps) is an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

func withFile(err error, file string) error {
	var ie *InputError
	if errors.As(err, &ie) && ie.File == "" {
		// err.Error() keeps the context wrapped around ie ("tensor …: ");
		// err stays the cause, so what ie wraps is still reachable.
		return &InputError{File: file, Msg: err.Error(), Err: err}
	}
	return err
}
