// Command attnopt finds attention blocks in ONNX models and rewrites them
// into fused, memory-efficient attention ops.
package main

import "os"

func main() {
	stop := watchSignals(os.Stderr, os.Exit)
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
