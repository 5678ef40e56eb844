package main

import (
	"fmt"
	"io"

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
	ONNXRuntime library `json:"onnxruntime"`
	CustomOps   library `json:"custom_ops"`
}

// library is a found library, or why none was.
type library struct {
	Path    string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
	From    string `json:"from,omitempty"`
	Error   string `json:"error,omitempty"`
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print attnopt's version and the ONNX Runtime and custom-op libraries it finds",
		Example: `  attnopt version
  attnopt version --json`,
		Args: operands,
		RunE: func(c *cobra.Command, args []string) error {
			d := versionDoc{Schema: report.VersionSchemaV1, Info: version.Get(), ONNXRuntime: findORT(), CustomOps: findCustomOps()}
			if asJSON {
				return report.WriteJSON(stdout, d)
			}
			fmt.Fprintf(stdout, "attnopt %s\n", d.Info)
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
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON (schema "+report.VersionSchemaV1+")")
	return c
}

func findORT() library {
	f, err := ort.LocateLibrary("")
	if err != nil {
		return library{Error: err.Error()}
	}
	rt, err := ort.Open(f.Path)
	if err != nil {
		return library{Path: f.Path, From: f.From, Error: "found " + f.Path + " but it does not load: " + err.Error()}
	}
	return library{Path: f.Path, Version: rt.Version(), From: f.From}
}

func findCustomOps() library {
	f, err := ort.LocateCustomOps("")
	if err != nil {
		return library{Error: err.Error()}
	}
	return library{Path: f.Path, From: f.From}
}
