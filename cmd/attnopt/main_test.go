package main

import (
	"os"
	"testing"
)

// The package's tests check what validation finds, in the pure-Go runtime,
// wherever they run: CI has ONNX Runtime and the custom-op library, which
// the default (--runtime auto) would pick. runtime_test.go unsets this to
// test the default itself.
func TestMain(m *testing.M) {
	if os.Getenv(runtimeEnv) == "" {
		os.Setenv(runtimeEnv, "go")
	}
	os.Exit(m.Run())
}
