package passes_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval"
	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
	"github.com/attnopt/attnopt/internal/testgraph"
	. "github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
)

// TestLiftONNXAttentionNumbers rewrites every single-op ONNX Attention
// backend test that lifts (rank 3 and 4, GQA, bool/float masks, causal,
// scale, KV cache with present outputs) for each target and checks every
// output, present_key/present_value included, against ONNX's stored
// reference outputs: in the Go runtime, and in ONNX Runtime (with the
// custom-op library for attnopt) when it is available.
func TestLiftONNXAttentionNumbers(t *testing.T) {
	dirs := corpus.Glob(t, filepath.Join("onnx", "*", "test_attention*"))
	runners, ortOK, customOK := testRunners(t)
	fused := map[string]int{}
	for _, dir := range dirs {
		if strings.HasSuffix(dir, "_expanded") {
			continue
		}
		m, err := graph.Load(filepath.Join(dir, "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if len(FindSites(m.Graph).Sites) != 1 {
			continue // kept with a reason (TestCorpusSites)
		}
		ins, want := loadDataSet(t, m, filepath.Join(dir, "test_data_set_0"))
		for _, target := range []string{"attnopt", "ort"} {
			t.Run(filepath.Base(dir)+"/"+target, func(t *testing.T) {
				rew, _ := graph.Load(filepath.Join(dir, "model.onnx"))
				c, err := Rewrite(rew, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				if a := c.Actions[0]; !a.Fused {
					if target == "attnopt" {
						t.Fatalf("not fused: %s", a.Reason)
					}
					t.Skipf("left for %s: %s", target, a.Reason)
				}
				fused[target]++
				data, _ := rew.Marshal()
				if rew, err = graph.LoadBytes(data, ""); err != nil {
					t.Fatal(err)
				}
				checkStoredOutputs(t, m, rew, ins, want, runners, target == "attnopt" && !customOK)
			})
		}
	}
	t.Logf("fused against ONNX's reference outputs: attnopt %d, ort %d (ONNX Runtime checked: %v, custom ops: %v)", fused["attnopt"], fused["ort"], ortOK, customOK)
	if fused["attnopt"] < 36 || fused["ort"] == 0 {
		t.Errorf("fused attnopt %d, ort %d; want every lifted case for attnopt and some for ort", fused["attnopt"], fused["ort"])
	}
}

// testRunners are the Go runtime and, when its library is found, ONNX
// Runtime; customOK says whether the attnopt custom-op library is there.
func testRunners(t *testing.T) (runners []validate.Runner, ortOK, customOK bool) {
	runners = []validate.Runner{validate.GoRunner{}}
	if lib, err := ort.FindLibrary(""); err == nil {
		r, err := validate.NewORTRunner(lib, "")
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
		ortOK = true
		_, err = ort.CustomOpsLibrary("")
		customOK = err == nil
	}
	return runners, ortOK, customOK
}

// checkStoredOutputs runs rew in every runner (ONNX Runtime skipped when
// skipORT) and compares each of m's outputs with its stored reference.
func checkStoredOutputs(t *testing.T, m, rew *graph.Model, ins map[string]*eval.Tensor, want []*eval.Tensor, runners []validate.Runner, skipORT bool) {
	t.Helper()
	for _, r := range runners {
		if r.Name() == "ort" && skipORT {
			continue
		}
		got, err := r.Run(rew, ins)
		if err != nil {
			t.Fatalf("%s runtime: %v", r.Name(), err)
		}
		for i, o := range m.Graph.Outputs {
			if o == nil || want[i] == nil {
				continue
			}
			mt, err := validate.Compare(o.Name, want[i], got[o.Name], validate.Tolerance(want[i].DType), 0)
			if err != nil {
				t.Fatalf("%s runtime, output %s: %v", r.Name(), o.Name, err)
			}
			if !mt.Pass {
				t.Errorf("%s runtime, output %s: max abs %.3g at %v, %d non-finite", r.Name(), o.Name, mt.MaxAbs, mt.WorstIndex, mt.NaNs)
			}
		}
	}
}

// loadDataSet reads a backend test's inputs and reference outputs in the
// model's declared order.
func loadDataSet(t *testing.T, m *graph.Model, dir string) (map[string]*eval.Tensor, []*eval.Tensor) {
	ins := map[string]*eval.Tensor{}
	for i, v := range m.Graph.Inputs {
		x, err := eval.ReadTensorProtoFile(filepath.Join(dir, fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			t.Fatal(err)
		}
		ins[v.Name] = x
	}
	var outs []*eval.Tensor
	for i := range m.Graph.Outputs {
		p := filepath.Join(dir, fmt.Sprintf("output_%d.pb", i))
		if _, err := os.Stat(p); err != nil {
			outs = append(outs, nil)
			continue
		}
		x, err := eval.ReadTensorProtoFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, x)
	}
	return ins, outs
}

// TestDynamoOp23FixturesRetarget: the dynamo opset-23 exports hold ONNX
// Attention; every one is lifted and becomes exactly one
// attnopt.FlashAttention (--target attnopt) or one MultiHeadAttention
// (--target ort), and the rewrite agrees with the original in the Go
// runtime (validate's fixture test repeats this in ONNX Runtime).
func TestDynamoOp23FixturesRetarget(t *testing.T) {
	man := loadManifestModels(t)
	checked := 0
	for _, fx := range man {
		if !strings.HasSuffix(fx.Name, "_dynamo_op23") || fx.FusableCount == 0 {
			continue
		}
		path := filepath.Join("..", "testdata", fx.File)
		if m, err := graph.Load(path); err == nil && len(NestedSites(FindSites(m.Graph).Nested)) > 0 {
			continue // attention inside an If: rewrite_nested_test.go
		}
		for target, op := range map[string]string{"attnopt": "attnopt.FlashAttention", "ort": "com.microsoft.MultiHeadAttention"} {
			t.Run(fx.Name+"/"+target, func(t *testing.T) {
				orig, err := graph.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if res := FindSites(orig.Graph); len(res.Fused) != 0 || len(res.Sites) != fx.AttentionCount {
					t.Fatalf("%d sites, %d left fused; want all %d attentions as sites", len(res.Sites), len(res.Fused), fx.AttentionCount)
				}
				rew, _ := graph.Load(path)
				c, err := Rewrite(rew, Options{Target: target, VerifyEach: true})
				if err != nil {
					t.Fatal(err)
				}
				if c.FusedCount() != fx.AttentionCount {
					t.Fatalf("fused %d of %d", c.FusedCount(), fx.AttentionCount)
				}
				counts := map[string]int{}
				for _, n := range rew.Graph.Nodes {
					counts[OpName(n)]++
				}
				if counts[op] != fx.AttentionCount || counts["ai.onnx.Attention"] != 0 {
					t.Fatalf("%d %s and %d ONNX Attention, want %d and 0", counts[op], op, counts["ai.onnx.Attention"], fx.AttentionCount)
				}
				compareModels(t, orig, rew, 3)
			})
			checked++
		}
	}
	if checked < 16 {
		t.Fatalf("checked %d fixture rewrites, want the 8 dynamo opset-23 fixtures with attention for 2 targets", checked)
	}
}

type manifestModel struct {
	Name           string `json:"name"`
	File           string `json:"file"`
	AttentionCount int    `json:"attention_count"`
	FusableCount   int    `json:"fusable_count"`
}

func loadManifestModels(t *testing.T) []manifestModel {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "MANIFEST.json"))
	if err != nil {
		t.Skip("testdata/MANIFEST.json not present")
	}
	var m struct{ Models []manifestModel }
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Models
}

// A masked MultiHeadAttention (what --target ort writes for a masked site)
// is lifted and re-targeted to attnopt.FlashAttention, agreeing with the
// original pattern in the Go runtime.
func TestLiftMaskedMHA(t *testing.T) {
	b := testgraph.HFSelfAttention(17, "batch", "seq", 32, 4)
	orig, m := b.Model(), b.Model()
	if _, err := Rewrite(m, Options{Target: "ort"}); err != nil {
		t.Fatal(err)
	}
	res := FindSites(m.Graph)
	if len(res.Sites) != 1 || res.Sites[0].Lifted == nil || res.Sites[0].Mask() != MaskAdditive {
		t.Fatalf("want one lifted masked MultiHeadAttention site, got %d sites", len(res.Sites))
	}
	c, err := Rewrite(m, Options{Target: "attnopt", VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.FusedCount() != 1 {
		t.Fatalf("fused %d: %s", c.FusedCount(), c.Actions[0].Reason)
	}
	for _, n := range m.Graph.Nodes {
		if n.OpType == "MultiHeadAttention" {
			t.Fatal("MultiHeadAttention left")
		}
	}
	compareModels(t, orig, m, 5)
}

// Attention inside subgraphs is listed with its path: the If branches of a
// torch.cond export, and the GPT-2 decoder inside ONNX Runtime's BeamSearch.
func TestNestedAttentionListed(t *testing.T) {
	beam, _ := corpus.Lookup("onnxruntime", "tiny_gpt2_beamsearch.onnx")
	cases := []struct {
		path   string
		corpus bool // absent from a clone without the shared corpus
		op     string
		n      int
		in     string
	}{
		{filepath.Join("..", "testdata", "models", "cond_dynamo_op23", "model.onnx"), false, "ai.onnx.Attention", 2, "If node_cond__0/"},
		{beam, true, "com.microsoft.Attention", 5, "BeamSearch BeamSearch_gpt2/decoder"},
	}
	for _, tc := range cases {
		m, err := graph.Load(tc.path)
		// graph.InputError unwraps to the *fs.PathError: a missing corpus
		// file is told apart from a bad one.
		if tc.corpus && errors.Is(err, fs.ErrNotExist) {
			t.Logf("corpus not present: %s skipped", tc.path)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		res := FindSites(m.Graph)
		got := 0
		for _, n := range res.Nested {
			if n.Op == tc.op && strings.HasPrefix(n.Path, tc.in) {
				got++
			}
		}
		if got != tc.n || len(res.Sites) != 0 {
			t.Errorf("%s: %d nested %s under %q (%d sites), want %d: %+v", tc.path, got, tc.op, tc.in, len(res.Sites), tc.n, res.Nested)
		}
	}
}

// The grouped-query fixture rewrites with --target gqa into one
// GroupQueryAttention reading 2 key/value heads unrepeated, and agrees with
// the original in the Go runtime (validate's fixture test runs it in ORT).
func TestGQATargetOnGQAFixture(t *testing.T) {
	path := filepath.Join("..", "testdata", "models", "gqa_dynamo_op23", "model.onnx")
	orig, err := graph.Load(path)
	if err != nil {
		t.Skip(err)
	}
	rew, _ := graph.Load(path)
	c, err := Rewrite(rew, Options{Target: "gqa", VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.FusedCount() != 1 {
		t.Fatalf("fused %d: %s", c.FusedCount(), c.Actions[0].Reason)
	}
	for _, n := range rew.Graph.Nodes {
		if n.OpType == "GroupQueryAttention" && (n.AttrInt("num_heads", 0) != 8 || n.AttrInt("kv_num_heads", 0) != 2) {
			t.Fatalf("heads %d/%d, want 8/2", n.AttrInt("num_heads", 0), n.AttrInt("kv_num_heads", 0))
		}
		if n.OpType == "Expand" && n.Output(0).Type.Rank() == 5 {
			t.Fatal("key/value heads repeated")
		}
	}
	compareModels(t, orig, rew, 2)
}

// The seed SDPA block at its real size (N 10,000, 16 heads of dim 4, fp16,
// bool mask) exported by dynamo at opset 23 is one lifted site of 3.2 GB of
// scores; the attnopt rewrite reads the (1, 1, N, N) mask as it is, never
// expanded over heads. Its numbers are checked at N 64 on the same export
// form (sdpa_h16d4_fp16_dynamo_op23); bench/sdpa_op23_rss.sh runs it.
func TestSeedSDPAOp23RealSize(t *testing.T) {
	path := filepath.Join("..", "testdata", "examples", "seed_sdpa_mask_h16d4_dynamo_op23.onnx")
	m, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res := FindSites(m.Graph)
	if len(res.Sites) != 1 {
		t.Fatalf("%d sites", len(res.Sites))
	}
	if sb, ok := res.Sites[0].ScoreBytes(); !ok || sb != 16*10000*10000*2 {
		t.Fatalf("score bytes %d", sb)
	}
	if _, err := Rewrite(m, Options{Target: "attnopt", VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range m.Graph.Nodes {
		if n.OpType == "FlashAttention" {
			found = n.Input(3) != nil && n.Input(3).Name == "mask"
		}
		if n.OpType == "Expand" {
			t.Fatalf("the rewrite expands %q", n.Input(0).Name)
		}
	}
	if !found {
		t.Fatal("no FlashAttention reading the mask input as it is")
	}
}
