package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// validate exits 1, naming the output and its error, on a rewrite whose
// fused node has K and V swapped or its scale doubled; 0 on the real one.
func TestValidateCLIFailsOnCorruptedRewrites(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(orig, testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 16, D: 8, Scale: "div", Mask: "add"}).Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "-o", good, "--min-scores", "0"); code != 0 {
		t.Fatal(stderr)
	}
	for _, how := range []string{"", "swap-kv", "double-scale"} {
		path := good
		if how != "" {
			m, err := graph.Load(good)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range m.Graph.Nodes {
				if n.OpType != "FlashAttention" {
					continue
				}
				if how == "swap-kv" {
					k, v := n.Input(1), n.Input(2)
					n.SetInput(1, v)
					n.SetInput(2, k)
				} else {
					n.SetAttr(graph.FloatAttr("scale", 2*n.AttrFloat("scale", 1)))
				}
			}
			path = filepath.Join(dir, how+".onnx")
			if _, err := m.Save(path); err != nil {
				t.Fatal(err)
			}
		}
		for _, scope := range []string{"sites", "model"} {
			code, stdout, stderr := runCLI("validate", orig, path, "--scope", scope)
			switch {
			case how == "" && code != 0:
				t.Errorf("%s: clean rewrite failed: %s", scope, stderr)
			case how != "" && (code != 1 || !strings.Contains(stderr, `output "out" max abs error`) || !strings.Contains(stdout, "FAIL")):
				t.Errorf("%s/%s: exit %d, stderr %q", how, scope, code, stderr)
			}
		}
	}
}

// The seed CPA3D at full size under a 16 GiB budget: exact fusion fits; the
// output gives the plan, memory before and after, and the error measured at
// a reduced length.
func TestRewriteSeedCPA3DWithBudget(t *testing.T) {
	in := writeModel(t, testgraph.CPA3D(17, 128, 128, 128, 128, 4))
	code, stdout, stderr := runCLI("rewrite", in, "-o", in+".out.onnx", "--memory-budget", "16GiB", "--allow-approx")
	if code != 0 {
		t.Fatal(stderr)
	}
	for _, want := range []string{"plan: exact; memory 64.0 TiB (scores) → 4.0 GiB", "fits the budget", "q_len 2097152 → ", "PASS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// validate --scope sites on a model none of whose attention was rewritten
// compares nothing: it says so and exits 3, not PASS.
func TestValidateCLINoChecks(t *testing.T) {
	in := writeModel(t, testgraph.Classifier())
	for _, args := range [][]string{{}, {"--json"}} {
		code, stdout, stderr := runCLI(append([]string{"validate", in, in}, args...)...)
		if code != 3 || strings.Contains(stdout, "PASS") || !strings.Contains(stderr, "nothing to validate") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
		if len(args) == 0 && !strings.Contains(stdout, "NO CHECKS") {
			t.Errorf("stdout lacks NO CHECKS: %q", stdout)
		}
		if len(args) == 1 && !strings.Contains(stdout, `"no_checks": true`) {
			t.Errorf("JSON lacks no_checks: %q", stdout)
		}
	}
	if code, _, stderr := runCLI("validate", in, in, "--scope", "model"); code != 0 {
		t.Errorf("--scope model: exit %d: %s", code, stderr)
	}
}

// A dynamic-axis TorchScript Llama: each site's output also feeds a Shape
// (reshape arithmetic), which the rewrite folds away; validation still finds
// the replacement, for both targets.
func TestValidateCLIDynamicLlama(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "models", "hf_llama_gqa_dynamic", "model.onnx")
	if _, err := os.Stat(in); err != nil {
		t.Skip("fixture not present")
	}
	for _, target := range []string{"attnopt", "ort"} {
		out := filepath.Join(t.TempDir(), "rw.onnx")
		if code, _, stderr := runCLI("rewrite", in, "-o", out, "--target", target, "--min-scores", "0"); code != 0 {
			t.Fatal(stderr)
		}
		code, stdout, stderr := runCLI("validate", in, out)
		if code != 0 || strings.Count(stdout, "ok\n") != 2 || !strings.Contains(stdout, "PASS") {
			t.Errorf("%s: exit %d\n%s%s", target, code, stdout, stderr)
		}
	}
}

// A pair in which no site was rewritten checks nothing, even when the
// original has sites: identical files, and a rewrite that left every site
// as it was (below --min-scores). Both are NO CHECKS (exit 3) with the
// reason, never one vacuous PASS per site; --scope model still compares.
func TestValidateCLINoRewrittenSite(t *testing.T) {
	vit := "../../testdata/models/timm_vit/model.onnx" // 2 sites of 4.5 KiB
	kept := filepath.Join(t.TempDir(), "kept.onnx")
	if code, stdout, stderr := runCLI("rewrite", vit, "-o", kept, "--quiet", "--min-scores", "1GiB"); code != 0 || !strings.Contains(stdout, "0 of 2 site(s) fused") {
		t.Fatalf("rewrite: exit %d:\n%s%s", code, stdout, stderr)
	}
	for _, tc := range []struct{ name, rewritten string }{{"identical files", vit}, {"no site fused", kept}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rt := range []string{"go", "ort"} {
				if rt == "ort" && os.Getenv("ONNXRUNTIME_LIB") == "" {
					continue
				}
				code, stdout, stderr := runCLI("validate", vit, tc.rewritten, "--runtime", rt)
				if code != exitNoChecks || strings.Contains(stdout, "PASS") || !strings.Contains(stdout, "NO CHECKS: no attention site of the original was rewritten") ||
					!strings.Contains(stderr, "no attention site of "+vit+" was rewritten; nothing to validate") {
					t.Errorf("%s: exit %d, stdout %q, stderr %q", rt, code, stdout, stderr)
				}
				code, stdout, _ = runCLI("validate", vit, tc.rewritten, "--runtime", rt, "--json")
				var rep struct {
					NoChecks bool              `json:"no_checks"`
					Pass     bool              `json:"pass"`
					Checks   []json.RawMessage `json:"checks"`
				}
				if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitNoChecks || !rep.NoChecks || rep.Pass || len(rep.Checks) != 0 {
					t.Errorf("%s --json: exit %d, %+v (%v)", rt, code, rep, err)
				}
				if code, stdout, stderr := runCLI("validate", vit, tc.rewritten, "--runtime", rt, "--scope", "model"); code != 0 || !strings.Contains(stdout, "model\tlogits\t0\t") {
					t.Errorf("%s --scope model: exit %d:\n%s%s", rt, code, stdout, stderr)
				}
			}
		})
	}
}
