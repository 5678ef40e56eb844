package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// edited loads path, applies edit to its model and saves it as name.
func edited(t *testing.T, path, name string, edit func(m *graph.Model)) string {
	t.Helper()
	m, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	out := filepath.Join(filepath.Dir(path), name)
	if _, err := m.Save(out); err != nil {
		t.Fatal(err)
	}
	return out
}

func opNode(m *graph.Model, op string) *graph.Node {
	for _, n := range m.Graph.Nodes {
		if n.OpType == op {
			return n
		}
	}
	return nil
}

// forgeWindowPlan writes what a window rewrite records on an exact node.
func forgeWindowPlan(n *graph.Node, grid string) {
	n.SetMeta("attnopt.plan", "window")
	n.SetMeta("attnopt.grid", grid)
	n.SetMeta("attnopt.window", "2x2")
	n.SetMeta("attnopt.shift", "0x0")
}

// after inserts op(n's output) between n and its readers (graph outputs
// included), extra inputs after it.
func after(m *graph.Model, n *graph.Node, op string, extra ...*graph.Value) {
	out := n.Output(0)
	y := m.Graph.NewValue("forged", out.Type)
	m.Graph.ReplaceAllUses(out, y)
	m.Graph.AddNode(op, "", "forged_"+op, append([]*graph.Value{out}, extra...), []*graph.Value{y})
	if err := m.Graph.Sort(); err != nil {
		panic(err)
	}
}

// zeroOutput multiplies the node's output by 0 before its readers.
func zeroOutput(m *graph.Model, n *graph.Node) {
	after(m, n, "Mul", m.Graph.AddInit("forged_zero", graph.NewTensor("", graph.Float32, nil, []byte{0, 0, 0, 0})))
}

// Forged metadata never makes a broken exact rewrite pass: each corruption
// of attnopt.FlashAttention, with attnopt.plan=window and grid/window/shift
// keys added, exits 1; so does the forged plan alone (the ops are exact,
// the file says window) and a forged 99999999999² grid, at site scope.
func TestValidateIgnoresForgedPlans(t *testing.T) {
	orig := writeModel(t, testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 16, D: 8, Scale: "div", Mask: "add"}))
	good := filepath.Join(filepath.Dir(orig), "good.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "-o", good, "--min-scores", "0"); code != 0 {
		t.Fatal(stderr)
	}
	// Site scope reads the site's ops and refuses the disagreeing record;
	// model scope ignores metadata and the numbers fail.
	const forged = `records plan "window" for site 0, but the site computes exact attention`
	cases := []struct {
		name      string
		edit      func(m *graph.Model, fa *graph.Node)
		modelWant string // "": the numbers are exact, model scope passes
	}{
		{"scale doubled", func(m *graph.Model, fa *graph.Node) {
			fa.SetAttr(graph.FloatAttr("scale", 2*fa.AttrFloat("scale", 1)))
			forgeWindowPlan(fa, "4x4")
		}, "max abs error"},
		{"mask dropped", func(m *graph.Model, fa *graph.Node) {
			fa.SetInput(3, nil)
			fa.Inputs = fa.Inputs[:3]
			forgeWindowPlan(fa, "4x4")
		}, "max abs error"},
		{"output zeroed", func(m *graph.Model, fa *graph.Node) {
			forgeWindowPlan(fa, "4x4")
			zeroOutput(m, fa)
		}, "max abs error"},
		{"plan alone", func(m *graph.Model, fa *graph.Node) { forgeWindowPlan(fa, "4x4") }, ""},
		{"grid 99999999999²", func(m *graph.Model, fa *graph.Node) { forgeWindowPlan(fa, "99999999999x99999999999") }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := edited(t, good, strings.ReplaceAll(c.name, " ", "_")+".onnx", func(m *graph.Model) { c.edit(m, opNode(m, "FlashAttention")) })
			code, stdout, stderr := runCLI("validate", orig, bad)
			if code != exitFailed || strings.Contains(stdout, "\nPASS") || !strings.Contains(stderr, forged) {
				t.Errorf("sites: exit %d, want 1 naming the forged plan\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = runCLI("validate", orig, bad, "--scope", "model")
			if c.modelWant == "" && code != 0 || c.modelWant != "" && (code != exitFailed || !strings.Contains(stderr, c.modelWant)) {
				t.Errorf("model: exit %d, want %q\n%s%s", code, c.modelWant, stdout, stderr)
			}
		})
	}
	// diff does not believe the record either: the forged node is exact.
	plan := filepath.Join(filepath.Dir(good), "plan_alone.onnx")
	if _, stdout, _ := runCLI("diff", orig, plan); strings.Contains(stdout, "approx") || !strings.Contains(stdout, "\tfused\t") {
		t.Errorf("diff calls the forged exact node approximate:\n%s", stdout)
	}
	// Without the forged plan the same corruptions fail on their numbers
	// at site scope too (validate_test.go covers swapped K/V, doubled scale).
	bad := edited(t, good, "zeroed_only.onnx", func(m *graph.Model) { zeroOutput(m, opNode(m, "FlashAttention")) })
	if code, stdout, stderr := runCLI("validate", orig, bad); code != exitFailed || !strings.Contains(stderr, "max abs error") {
		t.Errorf("zeroed output: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A real window rewrite whose recorded grid, or WindowAttention's own
// spatial_shape, is forged to 99999999999²: range-checked before any
// arithmetic, exit 1 naming the grid.
func TestValidateRangeChecksWindowGrids(t *testing.T) {
	orig := writeModel(t, testgraph.SAGAN(17, 16, 16, 16))
	good := filepath.Join(filepath.Dir(orig), "window.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "--window", "8x8", "-o", good); code != exitApproximate {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	huge := []int64{99999999999, 99999999999}
	// A forged record fails (1); a forged op that the custom-op library
	// would refuse is bad input, refused on load like any such model (2).
	cases := []struct {
		name string
		edit func(n *graph.Node)
		want string
		code int
	}{
		{"recorded grid", func(n *graph.Node) { n.SetMeta("attnopt.grid", "99999999999x99999999999") }, "records grid", exitFailed},
		{"recorded and spatial_shape", func(n *graph.Node) {
			n.SetMeta("attnopt.grid", "99999999999x99999999999")
			n.SetAttr(graph.IntsAttr("spatial_shape", huge))
		}, "is not a grid of windows", exitBadInput},
		{"recorded window", func(n *graph.Node) { n.SetMeta("attnopt.window", "4x4") }, "records grid", exitFailed},
		{"recorded exact", func(n *graph.Node) { n.SetMeta("attnopt.plan", "exact") }, `records plan "exact" for site 0, but the site computes window`, exitFailed},
		{"bound not a number", func(n *graph.Node) { n.SetMeta("attnopt.max_error", "NaN") }, "not a positive finite number", exitFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := edited(t, good, strings.ReplaceAll(c.name, " ", "_")+".onnx", func(m *graph.Model) { c.edit(opNode(m, "WindowAttention")) })
			code, stdout, stderr := runCLI("validate", orig, bad)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want %d naming %q\n%s%s", code, c.code, c.want, stdout, stderr)
			}
		})
	}
}

// An approximate rewrite is never a PASS without a bound: exit 4; with
// --max-error above its error it passes, below it fails; a bound the
// rewrite recorded from its own --max-error is shown but not used: bounds
// come from the user (issue 34).
func TestValidateGatesApproximations(t *testing.T) {
	orig := writeModel(t, testgraph.SAGAN(17, 16, 16, 16))
	dir := filepath.Dir(orig)
	plain := filepath.Join(dir, "plain.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "--window", "8x8", "-o", plain); code != exitApproximate {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bounded := filepath.Join(dir, "bounded.onnx")
	if code, stdout, stderr := runCLI("rewrite", orig, "--window", "8x8", "--max-error", "100", "-o", bounded); code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no bound", []string{plain}, exitApproximate, []string{"APPROXIMATE (not a pass)"}},
		{"no bound, model scope", []string{plain, "--scope", "model"}, exitApproximate, []string{"APPROXIMATE (not a pass)"}},
		{"--max-error above", []string{plain, "--max-error", "100"}, 0, []string{"approximate: ok (max error 100, --max-error)", "\nPASS\n"}},
		{"--max-error below", []string{plain, "--max-error", "1e-6"}, exitFailed, []string{"FAIL (max error 1e-06, --max-error)", "\nFAIL\n"}},
		{"recorded bound", []string{bounded}, exitApproximate, []string{"APPROXIMATE (not a pass): no --max-error (the file records 100, not used)"}},
		{"--max-error overrides the record", []string{bounded, "--max-error", "1e-6"}, exitFailed, []string{"\nFAIL\n"}},
		{"negative --max-error", []string{plain, "--max-error", "-1"}, exitBadInput, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(append([]string{"validate", orig}, c.args...)...)
			if code != c.code || (c.code == exitApproximate && strings.Contains(stdout, "PASS")) {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

// A zeroed output is never cosine 1: undefined, printed - and JSON null.
func TestValidateCosineOfZeroedOutput(t *testing.T) {
	orig := writeModel(t, testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 16, D: 8, Scale: "div"}))
	good := filepath.Join(filepath.Dir(orig), "good.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "-o", good, "--min-scores", "0"); code != 0 {
		t.Fatal(stderr)
	}
	bad := edited(t, good, "zeroed.onnx", func(m *graph.Model) { zeroOutput(m, opNode(m, "FlashAttention")) })
	code, stdout, _ := runCLI("validate", orig, bad)
	if code != exitFailed || strings.Contains(stdout, "1.000000") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	row := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "site 0") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 8 || f[7] != "-" {
		t.Errorf("cosine column of %q is not -", row)
	}
	_, js, _ := runCLI("validate", orig, bad, "--json")
	var rep struct {
		Checks []struct {
			Outputs []struct {
				Cosine *float64 `json:"cosine"`
			} `json:"outputs"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || len(rep.Checks) == 0 || len(rep.Checks[0].Outputs) == 0 {
		t.Fatalf("%v: %s", err, js)
	}
	if c := rep.Checks[0].Outputs[0].Cosine; c != nil {
		t.Errorf("JSON cosine %v, want null", *c)
	}
}

// An op the Go runtime lacks is CANNOT CHECK, not a failure: exit 3 with
// the op named and --runtime ort suggested.
func TestValidateCannotCheckUnsupportedOp(t *testing.T) {
	b := testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 16, D: 8, Scale: "div"})
	orig := writeModel(t, b)
	good := filepath.Join(filepath.Dir(orig), "good.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "-o", good, "--min-scores", "0"); code != 0 {
		t.Fatal(stderr)
	}
	// Hardmax after the attention, in both files: the Go runtime has no
	// kernel for it, so the whole models cannot run.
	withHardmax := func(path, name string) string {
		return edited(t, path, name, func(m *graph.Model) { after(m, m.Graph.Outputs[0].Producer(), "Hardmax") })
	}
	o2, g2 := withHardmax(orig, "orig_hardmax.onnx"), withHardmax(good, "good_hardmax.onnx")
	for _, args := range [][]string{{"--scope", "model"}, {"--scope", "model", "--json"}} {
		code, stdout, stderr := runCLI(append([]string{"validate", o2, g2}, args...)...)
		if code != exitNoChecks || strings.Contains(stdout, "PASS") || !strings.Contains(stderr, "ai.onnx:Hardmax") || !strings.Contains(stderr, "--runtime ort") {
			t.Errorf("%v: exit %d, want 3 naming the op\n%s%s", args, code, stdout, stderr)
		}
		if len(args) == 3 && !strings.Contains(stdout, `"verdict": "cannot_check"`) {
			t.Errorf("JSON lacks the cannot_check verdict:\n%s", stdout)
		}
	}
}

// maskedRowModel is one SDPA block as dynamo writes a bool mask: a graph
// input turned into Where(mask, 0, -3.4e38) and added to the scores. A
// query row whose keys are all masked has equal scores and gets the mean
// of V.
func maskedRowModel() *testgraph.B {
	b := testgraph.New(17)
	q := b.Input("q", graph.Float32, 1, 2, 8, 4)
	k := b.Input("k", graph.Float32, 1, 2, 8, 4)
	v := b.Input("v", graph.Float32, 1, 2, 8, 4)
	mask := b.Input("mask", graph.Bool, 1, 1, 8, 8)
	s := b.Node("MatMul", []string{q, b.Node("Transpose", []string{k}, testgraph.Ints("perm", 0, 1, 3, 2))})
	s = b.Node("Mul", []string{s, b.Scalar(0.5)})
	bias := b.Node("Where", []string{mask, b.Scalar(0), b.Scalar(-math.MaxFloat32)})
	p := b.Node("Softmax", []string{b.Node("Add", []string{s, bias})}, testgraph.Int("axis", -1))
	out := b.Node("MatMul", []string{p, v})
	b.Output(out)
	return b
}

// flashRewrite is a hand-made rewrite of maskedRowModel: FlashAttention fed
// the bool mask (a fully masked row gives zeros: wrong here) or the finite
// bias (the row gets the mean of V: right).
func flashRewrite(boolMask bool) *testgraph.B {
	b := testgraph.New(17)
	b.Import("attnopt", 1)
	q := b.Input("q", graph.Float32, 1, 2, 8, 4)
	k := b.Input("k", graph.Float32, 1, 2, 8, 4)
	v := b.Input("v", graph.Float32, 1, 2, 8, 4)
	mask := b.Input("mask", graph.Bool, 1, 1, 8, 8)
	m := mask
	if !boolMask {
		m = b.Node("Where", []string{mask, b.Scalar(0), b.Scalar(-math.MaxFloat32)})
	}
	out := b.NodeN("FlashAttention", "attnopt", []string{q, k, v, m}, 1, testgraph.Float("scale", 0.5), testgraph.Int("causal", 0))[0]
	b.Output(out)
	return b
}

// renamed gives b's single output the name of orig's, so validate pairs them.
func renamed(t *testing.T, orig, rew *testgraph.B) string {
	t.Helper()
	op, rp := orig.Proto(), rew.Proto()
	old, name := rp.Graph.Output[0].GetName(), op.Graph.Output[0].GetName()
	for _, n := range rp.Graph.Node {
		for i, o := range n.Output {
			if o == old {
				n.Output[i] = name
			}
		}
	}
	rp.Graph.Output[0].Name = &name
	m, err := graph.FromProto(rp, "")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rewrite.onnx")
	if _, err := m.Save(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A rewrite that zeroes fully masked rows where the original (a finite
// fill, as dynamo writes) gives the mean of V is caught by validate's
// default inputs, in both scopes, naming the case; the right rewrite
// passes. --inputs with the user's own masked row catches it too.
func TestValidateCatchesZeroedMaskedRows(t *testing.T) {
	orig := writeModel(t, maskedRowModel())
	wrong := renamed(t, maskedRowModel(), flashRewrite(true))
	right := renamed(t, maskedRowModel(), flashRewrite(false))
	for _, scope := range []string{"sites", "model"} {
		code, stdout, stderr := runCLI("validate", orig, wrong, "--scope", scope)
		if code != exitFailed || !strings.Contains(stderr, "(case fully masked row)") || !strings.Contains(stdout, "cases: left padding, right padding, fully masked row, all keep") {
			t.Errorf("%s, wrong rewrite: exit %d, want 1 in the fully masked row case\n%s%s", scope, code, stdout, stderr)
		}
		if code, stdout, stderr := runCLI("validate", orig, right, "--scope", scope); code != 0 {
			t.Errorf("%s, right rewrite: exit %d\n%s%s", scope, code, stdout, stderr)
		}
	}
	// The user's inputs: one row with no key at all.
	keep := make([]bool, 64)
	for i := 8; i < 64; i++ {
		keep[i] = true
	}
	f := func(name string) testgraph.Array {
		vals := make([]float32, 64)
		for i := range vals {
			vals[i] = float32(math.Sin(float64(i*7 + len(name))))
		}
		return testgraph.Array{Name: name, Descr: "<f4", Shape: []int64{1, 2, 8, 4}, Data: testgraph.F32(vals...)}
	}
	npz := filepath.Join(t.TempDir(), "batch.npz")
	os.WriteFile(npz, testgraph.NPZ(f("q"), f("k"), f("v"), testgraph.Array{Name: "mask", Descr: "|b1", Shape: []int64{1, 1, 8, 8}, Data: testgraph.Bools(keep...)}), 0o644)
	for _, scope := range []string{"sites", "model"} {
		code, stdout, stderr := runCLI("validate", orig, wrong, "--scope", scope, "--inputs", npz)
		if code != exitFailed || !strings.Contains(stdout, "cases: inputs batch.npz, left padding") {
			t.Errorf("%s --inputs: exit %d\n%s%s", scope, code, stdout, stderr)
		}
		code, stdout, stderr = runCLI("validate", orig, right, "--scope", scope, "--inputs", npz, "--json")
		if code != 0 || !strings.Contains(stdout, `"inputs batch.npz"`) {
			t.Errorf("%s --inputs, right rewrite: exit %d\n%s%s", scope, code, stdout, stderr)
		}
	}
}

// --inputs that do not fit the model, or are no .npz at all, are bad
// input: exit 2, one line naming the file.
func TestValidateInputsRefused(t *testing.T) {
	orig := writeModel(t, maskedRowModel())
	right := renamed(t, maskedRowModel(), flashRewrite(false))
	dir := t.TempDir()
	q := testgraph.Array{Name: "q", Descr: "<f4", Shape: []int64{1, 2, 8, 4}, Data: make([]byte, 256)}
	mask := testgraph.Array{Name: "mask", Descr: "|b1", Shape: []int64{1, 1, 8, 8}, Data: make([]byte, 64)}
	named := func(a testgraph.Array, n string) testgraph.Array { a.Name = n; return a }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"not a zip", []byte("not numpy"), "not a .npz file"},
		{"an input missing", testgraph.NPZ(q, named(q, "k"), mask), `no array for input "v"`},
		{"an extra array", testgraph.NPZ(q, named(q, "k"), named(q, "v"), mask, named(q, "w")), `array "w" is not an input`},
		{"wrong dtype", testgraph.NPZ(q, named(q, "k"), named(q, "v"), named(testgraph.Array{Descr: "|u1", Shape: []int64{1, 1, 8, 8}, Data: make([]byte, 64)}, "mask")), `array "mask" is uint8; the input is bool`},
		{"wrong shape", testgraph.NPZ(q, named(q, "k"), named(q, "v"), named(testgraph.Array{Descr: "|b1", Shape: []int64{8, 8}, Data: make([]byte, 64)}, "mask")), `array "mask" has shape [8 8]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npz")
			os.WriteFile(path, c.data, 0o644)
			code, stdout, stderr := runCLI("validate", orig, right, "--inputs", path)
			if code != exitBadInput || !strings.Contains(stderr, path) || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("exit %d, want 2 with one line naming %s and %q\n%s%s", code, path, c.want, stdout, stderr)
			}
		})
	}
}
