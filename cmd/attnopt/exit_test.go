package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
)

// Every error a command line ends with is classified by type, cobra's
// included, and the type gives the exit code: the test asserts the type and
// the code, and that stderr is the error's one line. (The rewrite refusals
// were TestRewriteRefusals, which matched their messages.)
func TestErrorsAreClassifiedByType(t *testing.T) {
	dir := t.TempDir()
	notOnnx := filepath.Join(dir, "readme.onnx")
	if err := os.WriteFile(notOnnx, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sagan := writeModel(t, testgraph.SAGAN(17, 16, 4, 4))
	plain := writeModel(t, testgraph.Classifier())
	usage := func(err error) bool { return errors.As(err, new(usageError)) }
	input := func(err error) bool { return errors.As(err, new(inputError)) && graph.IsInputError(err) }
	cases := []struct {
		name string
		args []string
		is   func(error) bool // what err must be, beyond its code
		code int
	}{
		{"unknown command", []string{"no-such-command"}, usage, exitBadInput},
		{"unknown command, a suggestion", []string{"inspct"}, usage, exitBadInput},
		{"unknown command after a flag", []string{"--quiet", "inspct"}, usage, exitBadInput},
		{"unknown subcommand", []string{"version", "x"}, usage, exitBadInput},
		{"too few arguments", []string{"inspect"}, usage, exitBadInput},
		{"too many arguments", []string{"diff", sagan}, usage, exitBadInput},
		{"unknown flag", []string{"inspect", sagan, "--no-such-flag"}, usage, exitBadInput},
		{"bad flag value", []string{"validate", sagan, sagan, "--seed", "x"}, usage, exitBadInput},
		{"bad pin", []string{"inspect", sagan, "--shape", "x=1xbad"}, usage, exitBadInput},
		{"unknown target", []string{"rewrite", sagan, "--target", "tensorrt"}, usage, exitBadInput},
		{"output is the input", []string{"rewrite", sagan, "-o", sagan}, usage, exitBadInput},
		{"not ONNX", []string{"inspect", notOnnx}, input, exitBadInput},
		{"missing file", []string{"inspect", filepath.Join(dir, "missing.onnx")}, func(err error) bool {
			return input(err) && errors.Is(err, fs.ErrNotExist)
		}, exitBadInput},
		{"target refuses the model (opset < 23)", []string{"rewrite", sagan, "--target", "onnx", "-o", filepath.Join(dir, "o.onnx")}, func(err error) bool {
			return input(err) && errors.As(err, new(*passes.ModelError))
		}, exitBadInput},
		{"over budget", []string{"check", sagan, "--memory-budget", "1"}, func(err error) bool { return errors.As(err, new(*failedError)) }, exitFailed},
		{"nothing to validate", []string{"validate", plain, plain}, func(err error) bool { return errors.As(err, new(*noChecksError)) }, exitNoChecks},
		{"approximate, no bound", []string{"rewrite", sagan, "--window", "2x2", "-o", filepath.Join(dir, "w.onnx")}, func(err error) bool {
			return errors.As(err, new(*approximateError))
		}, exitApproximate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := execute(append(tc.args, "--quiet"), &out, &errb)
			if err == nil || !tc.is(err) {
				t.Fatalf("error %T %v", err, err)
			}
			var e exitError
			if !errors.As(err, &e) {
				t.Fatalf("%T is not classified", err)
			}
			var stderr bytes.Buffer
			if code := exitCode(err, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if got := stderr.String(); got != "attnopt: "+err.Error()+"\n" || strings.Count(got, "\n") != 1 {
				t.Errorf("stderr %q, want one line with the error", got)
			}
		})
	}
}

// The unknown command's line keeps cobra's suggestion, on the same line.
func TestUnknownCommandSuggests(t *testing.T) {
	code, _, stderr := runCLI("inspct")
	if code != exitBadInput || stderr != "attnopt: unknown command \"inspct\" for \"attnopt\"; did you mean inspect?\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// Each error type of cmd/ that wraps a cause unwraps to it.
func TestErrorTypesUnwrap(t *testing.T) {
	cause := &graph.InputError{File: "m.onnx", Msg: "bad"}
	for _, err := range []error{usageError{cause}, inputError{cause}} {
		if errors.Unwrap(err) != cause || err.Error() != cause.Error() {
			t.Errorf("%T: unwraps to %v, says %q", err, errors.Unwrap(err), err.Error())
		}
	}
}
