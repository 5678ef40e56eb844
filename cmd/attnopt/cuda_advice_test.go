package main

import (
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// inspect's CUDA advice for a float32 site of symbolic length: ORT's
// MultiHeadAttention takes its memory-efficient kernel only from 256
// tokens on, so the advice is hedged (it depends on the length at run
// time) until a pin makes the length known; then it is stated as fact.
func TestCUDAAdviceHedgesSymbolicLengths(t *testing.T) {
	b := testgraph.New(17)
	q := b.Input("q", graph.Float32, 1, 2, "seq", 16)
	k := b.Input("k", graph.Float32, 1, 2, "seq", 16)
	v := b.Input("v", graph.Float32, 1, 2, "seq", 16)
	kt := b.Node("Transpose", []string{k}, testgraph.Ints("perm", 0, 1, 3, 2))
	p := b.Node("Softmax", []string{b.Node("MatMul", []string{q, kt})}, testgraph.Int("axis", -1))
	b.Output(b.Node("MatMul", []string{p, v}))
	model := writeModel(t, b)
	cases := []struct {
		pin  []string
		want string
	}{
		{nil, "site 0 on ONNX Runtime's CUDA EP: --target attnopt (ORT's MultiHeadAttention may run unfused there: float32 takes the memory-efficient kernel only from 256 tokens on, and the length seq is symbolic: it depends on the length at run time (pin it with --dim to know))"},
		{[]string{"--dim", "seq=128"}, "site 0 on ONNX Runtime's CUDA EP: --target attnopt (ORT's MultiHeadAttention would run unfused there: float32 sequences shorter than 256 tokens)"},
		{[]string{"--dim", "seq=4096"}, "site 0 on ONNX Runtime's CUDA EP: --target ort (its MultiHeadAttention runs the memory-efficient kernel: head dims multiples of 8; no custom-op library needed)"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runCLI(append([]string{"inspect", model}, tc.pin...)...)
		if code != 0 || !strings.Contains(stdout, tc.want+"\n") {
			t.Errorf("inspect %v: exit %d %s\n%s\nwant the line %q", tc.pin, code, stderr, stdout, tc.want)
		}
		_, js, _ := runCLI(append([]string{"inspect", model, "--json"}, tc.pin...)...)
		if hedged := strings.Contains(js, `"at_run_time": true`); hedged != (tc.pin == nil) {
			t.Errorf("inspect --json %v: at_run_time %v, want %v", tc.pin, hedged, tc.pin == nil)
		}
	}
}
