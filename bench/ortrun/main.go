// Command ortrun runs a model once in ONNX Runtime (CPU) on seeded random
// inputs, registering attnopt's custom-op library when the model needs it.
// It exists so benchmarks can measure a run's peak memory with
// /usr/bin/time -v.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/validate"
)

func main() {
	lib := flag.String("ort-lib", "", "libonnxruntime path (default $ONNXRUNTIME_LIB, then eval/ort's search; .cache/ort with ATTNOPT_DEV=1)")
	ops := flag.String("custom-ops", "", "attnopt custom-op library (default $ATTNOPT_CUSTOM_OPS, then eval/ort's search; kernels/build with ATTNOPT_DEV=1)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ortrun [-ort-lib PATH] [-custom-ops PATH] MODEL")
		os.Exit(2)
	}
	m, err := graph.Load(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ortrun:", err)
		os.Exit(2)
	}
	r, err := validate.NewORTRunner(*lib, *ops)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ortrun:", err)
		os.Exit(2)
	}
	in, err := validate.RandomInputs(m, 1, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ortrun:", err)
		os.Exit(2)
	}
	start := time.Now()
	out, err := r.Run(m, in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ortrun:", err)
		os.Exit(1)
	}
	for _, o := range m.Graph.Outputs {
		fmt.Printf("%s: shape %v\n", o.Name, out[o.Name].Shape)
	}
	fmt.Printf("run: %.2f s\n", time.Since(start).Seconds())
}
