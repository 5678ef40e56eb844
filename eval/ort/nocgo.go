//go:build !cgo

package ort

import "github.com/attnopt/attnopt/eval"

// Runtime is unavailable without cgo.
type Runtime struct{}

// Session is unavailable without cgo.
type Session struct{}

// Open always fails without cgo.
func Open(libPath string) (*Runtime, error) { return nil, errNoCgo }

// Version is empty without cgo.
func (r *Runtime) Version() string { return "" }

// Path is empty without cgo.
func (r *Runtime) Path() string { return "" }

// NewSession always fails without cgo.
func (r *Runtime) NewSession(model []byte, opts SessionOptions) (*Session, error) {
	return nil, errNoCgo
}

// Inputs is empty without cgo.
func (s *Session) Inputs() []IOInfo { return nil }

// Outputs is empty without cgo.
func (s *Session) Outputs() []IOInfo { return nil }

// Run always fails without cgo.
func (s *Session) Run(inputs map[string]*eval.Tensor) (map[string]*eval.Tensor, error) {
	return nil, errNoCgo
}

// Close does nothing without cgo.
func (s *Session) Close() {}
