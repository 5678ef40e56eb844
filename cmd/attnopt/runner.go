package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/report"
	"github.com/attnopt/attnopt/validate"
	"github.com/spf13/cobra"
)

// runtimeEnv sets the default of --runtime (go, ort or auto).
const runtimeEnv = "ATTNOPT_RUNTIME"

// runtimeFlags are --runtime, --ort-lib and --custom-ops, shared by
// validate and rewrite --validate.
type runtimeFlags struct {
	name, ortLib, customOps string
	cmd                     *cobra.Command // its stderr takes the loading lines
}

func (f *runtimeFlags) register(c *cobra.Command) {
	f.cmd = c
	c.Flags().StringVar(&f.name, "runtime", "", "go, ort or auto (default auto, or $"+runtimeEnv+"): ONNX Runtime with attnopt's custom-op library when they are found, else the pure-Go runtime")
	c.Flags().StringVar(&f.ortLib, "ort-lib", "", "ONNX Runtime library for --runtime ort (default: $ORT_LIB, the Python environment's onnxruntime, the system library path)")
	c.Flags().StringVar(&f.customOps, "custom-ops", "", "attnopt's custom-op library for --runtime ort (default: $ATTNOPT_CUSTOM_OPS, the installed attnopt wheel)")
}

// mode is the runtime asked for: the flag; ort when a library flag is
// given; $ATTNOPT_RUNTIME; auto.
func (f *runtimeFlags) mode() (string, error) {
	m := f.name
	switch {
	case m != "":
	case f.ortLib != "" || f.customOps != "":
		m = "ort"
	case os.Getenv(runtimeEnv) != "":
		m = os.Getenv(runtimeEnv)
	default:
		m = "auto"
	}
	switch m {
	case "go", "ort", "auto":
		return m, nil
	}
	if f.name == "" {
		return "", usageError{fmt.Errorf("$%s=%q: want go, ort or auto", runtimeEnv, m)}
	}
	return "", usageError{fmt.Errorf("--runtime %q: want go, ort or auto", m)}
}

// choose picks the runner that compares rew with its original: ONNX
// Runtime when asked for (a setup problem is exit 2, before any run) or,
// by default, when it and, for a model with attnopt ops, the custom-op
// library are found; else the Go runtime, saying why.
func (f *runtimeFlags) choose(rew *graph.Model) (validate.Runner, *report.RuntimeInfo, error) {
	mode, err := f.mode()
	if err != nil {
		return nil, nil, err
	}
	if mode == "go" {
		why := "--runtime go"
		if f.name == "" {
			why = "$" + runtimeEnv + "=go"
		}
		return validate.GoRunner{}, &report.RuntimeInfo{Name: "go", Note: why}, nil
	}
	r, info, why, err := f.openORT(rew.Opset("attnopt") > 0)
	if err == nil {
		return r, info, nil
	}
	if mode == "ort" {
		return nil, nil, usageError{err}
	}
	return validate.GoRunner{}, &report.RuntimeInfo{Name: "go", Note: why}, nil
}

// openORT loads ONNX Runtime and finds the custom-op library when the
// model needs it. why is the short reason for the Go fallback.
func (f *runtimeFlags) openORT(needsCustomOps bool) (r validate.Runner, info *report.RuntimeInfo, why string, err error) {
	stderr := f.cmd.ErrOrStderr()
	announceDevMode(stderr)
	lib, err := ort.LocateLibrary(f.ortLib)
	if err != nil {
		return nil, nil, "no ONNX Runtime found: pip install onnxruntime, or set ORT_LIB", err
	}
	announceLoad(stderr, "ONNX Runtime", lib)
	rt, err := ort.Open(lib.Path)
	if err != nil {
		return nil, nil, "ONNX Runtime " + lib.Path + " does not load", fmt.Errorf("ONNX Runtime library %s (from %s) does not load: %v; install onnxruntime 1.24 or newer (pip install onnxruntime), or point ORT_LIB at one", lib.Path, lib.From, err)
	}
	info = &report.RuntimeInfo{Name: "ort", Library: lib.Path, Version: rt.Version(), LibraryFrom: lib.From}
	if needsCustomOps {
		ops, err := ort.LocateCustomOps(f.customOps)
		if err != nil {
			return nil, nil, "the model has attnopt ops and attnopt's custom-op library was not found: install the attnopt wheel, or set ATTNOPT_CUSTOM_OPS", err
		}
		info.CustomOps, info.CustomOpsFrom = ops.Path, ops.From
		announceLoad(stderr, "attnopt's custom-op library", ops)
	}
	runner, err := validate.NewORTRunner(lib.Path, info.CustomOps)
	if err != nil {
		return nil, nil, "ONNX Runtime " + lib.Path + " does not load", err
	}
	return runner, info, "", nil
}

// announceLoad says, before a library is loaded (its constructors run),
// which file and why; the report's provenance.runtime carries the same
// (library, library_from, custom_ops, custom_ops_from).
func announceLoad(w io.Writer, what string, f ort.Found) {
	fmt.Fprintf(w, "attnopt: loading %s %s (from %s)\n", what, f.Path, f.From)
}

// announceDevMode says that the library search also looks in the working
// directory and its parents ($ATTNOPT_DEV=1, eval/ort/find.go).
func announceDevMode(w io.Writer) {
	if ort.DevMode() {
		fmt.Fprintf(w, "attnopt: %s\n", ort.DevNotice)
	}
}

// writeRuntime prints which runtime ran the comparison, and the
// libraries, so a reader knows what the verdict is about.
func writeRuntime(w io.Writer, info *report.RuntimeInfo) {
	if info.Name == "ort" {
		switch {
		case info.CustomOps == "":
			fmt.Fprintf(w, "runtime: ONNX Runtime %s from %s: %s\n", info.Version, info.LibraryFrom, info.Library)
		case info.CustomOpsFrom == info.LibraryFrom:
			fmt.Fprintf(w, "runtime: ONNX Runtime %s with attnopt's custom ops, from %s: %s, %s\n", info.Version, info.LibraryFrom, info.Library, info.CustomOps)
		default:
			fmt.Fprintf(w, "runtime: ONNX Runtime %s from %s: %s; attnopt's custom ops from %s: %s\n", info.Version, info.LibraryFrom, info.Library, info.CustomOpsFrom, info.CustomOps)
		}
		return
	}
	fmt.Fprintf(w, "runtime: attnopt's pure-Go reference runtime (%s)\n", strings.TrimSpace(info.Note))
}
