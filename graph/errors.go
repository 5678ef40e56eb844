package graph

import (
	"errors"
	"fmt"
)

// InputError marks a problem with the model file itself (not ONNX, truncated,
// inconsistent, unsafe external data…). The CLI maps it to exit code 2.
type InputError struct {
	File string
	Msg  string
}

func (e *InputError) Error() string {
	if e.File == "" {
		return e.Msg
	}
	return e.File + ": " + e.Msg
}

func badInput(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// IsInputError reports whether err (or anything it wraps) is an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

func withFile(err error, file string) error {
	var ie *InputError
	if errors.As(err, &ie) && ie.File == "" {
		// err.Error() keeps the context wrapped around ie ("tensor …: ").
		return &InputError{File: file, Msg: err.Error()}
	}
	return err
}
