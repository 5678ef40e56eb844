// Command attnopt finds attention blocks in ONNX models and rewrites them
// into fused, memory-efficient attention ops.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
