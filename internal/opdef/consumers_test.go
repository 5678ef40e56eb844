package opdef_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/opdef"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/passes/match"
)

// oneOp is a model of one attnopt op over Q, K (1, 1, 4, dqk) and V
// (1, 1, 4, dv) with the given attributes.
func oneOp(op *opdef.Op, dqk, dv int, attrs []*graph.Attr) *graph.Model {
	b := testgraph.New(17)
	b.Import(opdef.Domain, opdef.Version)
	q, k, v := b.Input("q", graph.Float32, 1, 1, 4, dqk), b.Input("k", graph.Float32, 1, 1, 4, dqk), b.Input("v", graph.Float32, 1, 1, 4, dv)
	b.Output(b.NodeN(op.Name, opdef.Domain, []string{q, k, v}, 1)[0])
	m := b.Model()
	for _, a := range attrs {
		m.Graph.Nodes[0].SetAttr(a)
	}
	return m
}

// goReaders runs the model through every Go reader of the op: the fused
// schema (rewrite), the load check, and the Go runtime.
func goReaders(t *testing.T, m *graph.Model) map[string]error {
	t.Helper()
	in, err := eval.RandomInputs(m, 1, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, runErr := eval.Run(m, in, eval.Options{Threads: 1})
	return map[string]error{
		"schema":  passes.CheckFusedOps(m.Graph),
		"load":    passes.CheckRuntimeOps(m.Graph),
		"runtime": runErr,
	}
}

// TestCasesInEveryGoReader: the conformance cases (which the C++ reader
// runs as kernels/tests/op_cases.inc) are accepted or refused alike by the
// schema, the load check and the Go runtime.
func TestCasesInEveryGoReader(t *testing.T) {
	for _, op := range opdef.Ops() {
		for _, c := range op.Cases() {
			for reader, err := range goReaders(t, oneOp(op, 4, 4, c.Attrs)) {
				if (err == nil) != c.OK {
					t.Errorf("%s %q, %s: err %v, want ok %v", op.Name, c.Name, reader, err, c.OK)
				}
			}
		}
	}
}

// TestHeadDimLimitInEveryGoReader: head sizes at the kernels' limit run,
// one past it is refused by each Go reader of attnopt's ops.
func TestHeadDimLimitInEveryGoReader(t *testing.T) {
	for _, op := range opdef.Ops() {
		for _, c := range []struct {
			dqk, dv int
			ok      bool
		}{{opdef.HeadDimMin, opdef.HeadDimMin, true}, {opdef.HeadDimMax, opdef.HeadDimMax, true},
			{opdef.HeadDimMax + 1, 4, false}, {4, opdef.HeadDimMax + 1, false}} {
			for reader, err := range goReaders(t, oneOp(op, c.dqk, c.dv, op.Base)) {
				if (err == nil) != c.ok {
					t.Errorf("%s Dqk %d Dv %d, %s: err %v, want ok %v", op.Name, c.dqk, c.dv, reader, err, c.ok)
				}
			}
		}
	}
}

// TestAcceptRefusesWhatTheKernelsRefuse: --target attnopt leaves a site
// whose head size is past the kernels' limit as it was, with the reason;
// one at the limit is fused.
func TestAcceptRefusesWhatTheKernelsRefuse(t *testing.T) {
	for _, c := range []struct {
		d      int
		reason string
	}{
		{opdef.HeadDimMax, ""},
		{opdef.HeadDimMax + 1, "head sizes Dqk 257, Dv 257: attnopt's kernels take 1..256 (use --target ort)"},
	} {
		ctx, err := passes.Rewrite(testgraph.SDPABoolMask(17, graph.Float32, 1, 2, 8, c.d).Model(), passes.Options{Target: "attnopt"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ctx.Actions) != 1 {
			t.Fatalf("d %d: %d actions", c.d, len(ctx.Actions))
		}
		a := ctx.Actions[0]
		if a.Fused != (c.reason == "") || a.Reason != c.reason {
			t.Errorf("d %d: fused %v, reason %q; want %q", c.d, a.Fused, a.Reason, c.reason)
		}
		if c.reason != "" && (a.Reject == nil || a.Reject.Code != match.CodeLimit || a.Reject.Value == nil) {
			t.Errorf("d %d: reject %+v, want code %s naming Q", c.d, a.Reject, match.CodeLimit)
		}
	}
}

// TestRewritesWriteTheTable: the attnopt ops rewrites write (target
// attnopt, and the window plan) carry only attributes the table names,
// each in its range: the writers (passes/lower/attnopt.go, rows.go,
// approx.go) spell the table's names.
func TestRewritesWriteTheTable(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	type rewrite struct {
		model string
		opts  passes.Options
	}
	exact := passes.Options{Target: "attnopt"}
	cases := []rewrite{
		{"examples/sagan_64x64.onnx", passes.Options{Target: "attnopt", Approx: passes.ApproxOptions{Window: []int64{8, 8}, Shift: []int64{4, 4}}}},
		{"examples/mistral_window256_s4096.onnx", exact},
		{"examples/seed_sdpa_mask_h16d4.onnx", exact},
		{"fp16 causal finfo.min under a -inf bool mask", exact},
		{"Funnel's s - 1e6·(1 - m)", exact},
	}
	builders := map[string]func() *graph.Model{
		"fp16 causal finfo.min under a -inf bool mask": fp16FiniteCausal,
		"Funnel's s - 1e6·(1 - m)": func() *graph.Model {
			return testgraph.Attention(testgraph.Opts{B: 2, H: 4, N: 16, D: 8, Mask: "sub_inf", Scale: "mul"}).Model()
		},
	}
	for _, dir := range []string{"hf_qwen3_leftpad", "hf_qwen3_leftpad_dynamo", "hf_modernbert_pad", "hf_mistral_window", "hf_bert", "hf_gemma2_softcap"} {
		cases = append(cases, rewrite{"models/" + dir + "/model.onnx", exact})
	}
	seen := map[string]bool{}
	for _, c := range cases {
		m := (*graph.Model)(nil)
		if b := builders[c.model]; b != nil {
			m = b()
		}
		if strings.HasSuffix(c.model, ".onnx") {
			var err error
			if m, err = graph.Load(filepath.Join(root, c.model)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, err := passes.Rewrite(m, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		fused := 0
		for _, n := range ctx.Model.Graph.Nodes {
			op := opdef.Lookup(n.Domain, n.OpType)
			if op == nil {
				continue
			}
			fused++
			if _, err := op.Read(n); err != nil {
				t.Errorf("%s: %s: %v", c.model, n.Label(), err)
			}
			for _, a := range n.Attrs {
				if op.Attr(a.Name) == nil {
					t.Errorf("%s: %s writes %q, which the table does not name", c.model, n.Label(), a.Name)
				}
				seen[op.Name+"."+a.Name] = true
			}
		}
		if fused == 0 {
			t.Errorf("%s: no attnopt op written", c.model)
		}
	}
	// Every row is written by some rewrite here, so a renamed writer shows.
	var missing []string
	for _, op := range opdef.Ops() {
		for _, a := range op.Attrs {
			if !seen[op.Name+"."+a.Name] {
				missing = append(missing, op.Name+"."+a.Name)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("no rewrite here writes %s", strings.Join(missing, ", "))
	}
}

// fp16FiniteCausal is GPT-2's causal Where(tril, s, finfo.min) in float16
// under a padding Where(mask, s, -inf): rows that see no key are literal,
// with a finite causal_fill rounded as float16 (fill_round), which no
// fixture writes.
func fp16FiniteCausal() *graph.Model {
	b := testgraph.New(17)
	q, k, v := b.Input("q", graph.Float16, 1, 2, 8, 4), b.Input("k", graph.Float16, 1, 2, 8, 4), b.Input("v", graph.Float16, 1, 2, 8, 4)
	tril := make([]float64, 64)
	for i := 0; i < 8; i++ {
		for j := 0; j <= i; j++ {
			tril[i*8+j] = 1
		}
	}
	s := b.Node("MatMul", []string{q, b.Node("Transpose", []string{k}, testgraph.Ints("perm", 0, 1, 3, 2))})
	s = b.Node("Where", []string{b.Const(graph.Bool, []int64{1, 1, 8, 8}, tril...), s, b.ScalarOf(graph.Float16, -65504)})
	s = b.Node("Where", []string{b.Input("mask", graph.Bool, 1, 1, 8, 8), s, b.ScalarOf(graph.Float16, testgraph.NegInf)})
	b.Output(b.Node("MatMul", []string{b.Node("Softmax", []string{s}, testgraph.Int("axis", -1)), v}))
	return b.Model()
}
