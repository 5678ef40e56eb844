package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/internal/version"
	"github.com/attnopt/attnopt/report"
	"github.com/spf13/cobra"
)

// versionDoc is `attnopt version --json`: the build and the libraries
// --runtime ort would load from here.
type versionDoc struct {
	Schema string `json:"schema"`
	version.Info
	License     string  `json:"license"`
	ONNXRuntime library `json:"onnxruntime"`
	CustomOps   library `json:"custom_ops"`
	// CUDA is what this machine's driver reports; OnCUDA whether attnopt's
	// ops would run on ONNX Runtime's CUDA provider here, and why not.
	CUDA   ort.CUDAStatus `json:"cuda"`
	OnCUDA string         `json:"attnopt_ops_on_cuda"`
}

// library is a found library, or why none was.
type library struct {
	Path    string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
	From    string `json:"from,omitempty"`
	Error   string `json:"error,omitempty"`
	// Providers: ONNX Runtime's execution providers in this build of it.
	Providers []string `json:"providers,omitempty"`
	// Content: what the custom-op library can run (its CPU and CUDA kernels).
	Content *ort.LibraryContent `json:"content,omitempty"`
}

func newVersionCmd(stdout, stderr io.Writer) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print attnopt's version and the ONNX Runtime and custom-op libraries it finds",
		Example: `  attnopt version
  attnopt version --json`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			d := versionDoc{Schema: report.VersionSchemaV1, Info: version.Get(), License: version.License,
				ONNXRuntime: findORT(stderr), CustomOps: findCustomOps(stderr), CUDA: probeCUDA(stderr)}
			if d.CustomOps.Content != nil {
				_, d.OnCUDA = onCUDA(*d.CustomOps.Content, d.CUDA, d.ONNXRuntime.Providers)
			}
			if asJSON {
				return report.WriteJSON(stdout, d)
			}
			fmt.Fprintf(stdout, "attnopt %s\nlicense: %s\n", d.Info, d.License)
			for _, l := range []struct {
				what string
				lib  library
			}{{"ONNX Runtime", d.ONNXRuntime}, {"custom ops", d.CustomOps}} {
				switch {
				case l.lib.Error != "":
					fmt.Fprintf(stdout, "%s: %s\n", l.what, l.lib.Error)
				case l.lib.Version != "":
					fmt.Fprintf(stdout, "%s: %s, %s (%s)\n", l.what, l.lib.Version, l.lib.Path, l.lib.From)
				default:
					fmt.Fprintf(stdout, "%s: %s (%s)\n", l.what, l.lib.Path, l.lib.From)
				}
			}
			printCapabilities(stdout, d)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema "+report.VersionSchemaV1+")")
	return c
}

// findORT loads the ONNX Runtime found to read its version and
// providers, saying so first.
func findORT(stderr io.Writer) library {
	announceDevMode(stderr)
	f, err := ort.LocateLibrary("")
	if err != nil {
		return library{Error: err.Error()}
	}
	announceLoad(stderr, "ONNX Runtime", f)
	rt, err := ort.Open(f.Path)
	if err != nil {
		return library{Path: f.Path, From: f.From, Error: "found " + f.Path + " but it does not load: " + err.Error()}
	}
	lib := library{Path: f.Path, Version: rt.Version(), From: f.From}
	if lib.Providers, err = rt.Providers(); err != nil {
		lib.Error = err.Error()
	}
	return lib
}

// findCustomOps loads the custom-op library found to read its build
// info (eval/ort/library_content.go), saying so first.
func findCustomOps(stderr io.Writer) library {
	f, err := ort.LocateCustomOps("")
	if err != nil {
		return library{Error: err.Error()}
	}
	announceLoad(stderr, "attnopt's custom-op library", f)
	lib := library{Path: f.Path, From: f.From}
	if c, err := ort.ReadLibraryContent(f.Path); err != nil {
		lib.Error = err.Error()
	} else {
		lib.Content = &c
	}
	return lib
}

// printCapabilities is the text form of what can run where: the ORT
// providers, the library's kernels, the CUDA driver and the verdict.
func printCapabilities(w io.Writer, d versionDoc) {
	if c := d.CustomOps.Content; c != nil {
		fmt.Fprintf(w, "  CPU kernels: %s\n  CUDA kernels: %s\n", c.CPUKernels(), c.CUDAKernels())
	}
	if p := d.ONNXRuntime.Providers; p != nil {
		fmt.Fprintf(w, "ONNX Runtime providers: %s\n", strings.Join(p, ", "))
	}
	switch {
	case len(d.CUDA.Devices) > 0:
		var devs []string
		for _, dev := range d.CUDA.Devices {
			devs = append(devs, fmt.Sprintf("%s (sm_%d)", dev.Name, dev.SM))
		}
		fmt.Fprintf(w, "CUDA: driver %s, %s\n", d.CUDA.Driver, strings.Join(devs, ", "))
	case d.CUDA.Driver != "":
		fmt.Fprintf(w, "CUDA: driver %s, %s\n", d.CUDA.Driver, d.CUDA.Error)
	default:
		fmt.Fprintf(w, "CUDA: %s\n", d.CUDA.Error)
	}
	if d.OnCUDA != "" {
		fmt.Fprintf(w, "attnopt ops on CUDA: %s\n", d.OnCUDA)
	}
}

// probeCUDA asks the CUDA driver found in the system's library folders,
// announced first; with none, it loads nothing.
func probeCUDA(stderr io.Writer) ort.CUDAStatus {
	d := ort.LocateCUDADriver()
	if d.Path != "" {
		announceLoad(stderr, "the CUDA driver", d)
	}
	return ort.ProbeCUDA(d.Path)
}
