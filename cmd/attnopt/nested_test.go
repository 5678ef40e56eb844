package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/corpus"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// swapKVInSubgraphs writes a copy of the rewrite at in with K and V swapped
// in every fused op inside a subgraph: a wrong rewrite validate must refuse.
func swapKVInSubgraphs(t *testing.T, in, out string) {
	m, err := graph.Load(in)
	if err != nil {
		t.Fatal(err)
	}
	err = testgraph.EditSubgraphs(m, func(sub *graph.Model) {
		for _, f := range sub.Graph.Nodes {
			if f.Domain == "attnopt" || f.Domain == "com.microsoft" {
				k, v := f.Input(1), f.Input(2)
				f.SetInput(1, v)
				f.SetInput(2, k)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Save(out); err != nil {
		t.Fatal(err)
	}
}

// What a user sees for attention inside If branches and a Loop body:
// inspect lists the nested sites with their subgraph (text and JSON),
// check counts them against the budget, rewrite fuses them and says where,
// validate passes the rewrite (exit 0) and fails one with K and V swapped
// inside the branches (exit 1).
func TestCLINestedSites(t *testing.T) {
	for _, tc := range []struct {
		fixture, target  string
		inspect, rewrite []string // lines the output must contain
		paths            []string // JSON: each site's subgraph
	}{
		{"cond_if_dynamo", "attnopt",
			[]string{"2 attention site(s) (2 in subgraphs)", "in subgraph If node_cond__0/then_branch: ai.onnx.Softmax node_softmax is site 0", "in subgraph If node_cond__0/else_branch: ai.onnx.Softmax node_softmax_2 is site 1"},
			[]string{"site 0 (node_softmax in If node_cond__0/then_branch): fused into attnopt.FlashAttention attnopt/site0/FlashAttention", "site 1 (node_softmax_2 in If node_cond__0/else_branch): fused into attnopt.FlashAttention", "2 of 2 site(s) fused (target attnopt)"},
			[]string{"If node_cond__0/then_branch", "If node_cond__0/else_branch"}},
		{"loop_script", "ort",
			[]string{"1 attention site(s) (1 in subgraphs)", "in subgraph Loop Loop_10/body: ai.onnx.Softmax Softmax_51 is site 0"},
			[]string{"site 0 (Softmax_51 in Loop Loop_10/body): fused into com.microsoft.MultiHeadAttention", "1 of 1 site(s) fused (target ort)"},
			[]string{"Loop Loop_10/body"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			in := filepath.Join("..", "..", "testdata", "models", tc.fixture, "model.onnx")
			code, stdout, stderr := runCLI("inspect", in)
			for _, want := range tc.inspect {
				if code != 0 || !strings.Contains(stdout, want) {
					t.Errorf("inspect: exit %d, want %q in\n%s%s", code, want, stdout, stderr)
				}
			}
			code, stdout, _ = runCLI("inspect", "--json", in)
			var rep struct {
				Sites []struct {
					ID       int    `json:"id"`
					Subgraph string `json:"subgraph"`
				} `json:"sites"`
				Totals struct{ Sites int } `json:"totals"`
				Nested []struct {
					Path string `json:"path"`
					Site *int   `json:"site"`
				} `json:"nested"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
				t.Fatalf("inspect --json: exit %d, %v", code, err)
			}
			if len(rep.Sites) != len(tc.paths) || rep.Totals.Sites != len(tc.paths) || len(rep.Nested) != len(tc.paths) {
				t.Fatalf("inspect --json: %d sites (totals %d), %d nested; want %d", len(rep.Sites), rep.Totals.Sites, len(rep.Nested), len(tc.paths))
			}
			for i, p := range tc.paths {
				if s := rep.Sites[i]; s.ID != i || s.Subgraph != p || rep.Nested[i].Site == nil || *rep.Nested[i].Site != i || rep.Nested[i].Path != p {
					t.Errorf("inspect --json site %d: %+v, nested %+v; want subgraph %q", i, s, rep.Nested[i], p)
				}
			}

			// check gates on nested sites like on the main graph's.
			code, stdout, stderr = runCLI("check", in, "--memory-budget", "1KiB", "--format", "json")
			conforms(t, "check.v1.json", stdout)
			if code != 1 || !strings.Contains(stdout, `"subgraph": "`+tc.paths[0]+`"`) {
				t.Errorf("check: exit %d, want 1 with the site's subgraph\n%s%s", code, stdout, stderr)
			}

			dir := t.TempDir()
			out := filepath.Join(dir, "out.onnx")
			code, stdout, stderr = runCLI("rewrite", in, "-o", out, "--target", tc.target, "--quiet", "--min-scores", "0")
			for _, want := range tc.rewrite {
				if code != 0 || !strings.Contains(stdout, want) {
					t.Errorf("rewrite: exit %d, want %q in\n%s%s", code, want, stdout, stderr)
				}
			}
			code, stdout, stderr = runCLI("validate", in, out, "--quiet")
			if code != 0 || !strings.Contains(stdout, tc.paths[0]+" (site 0)") || !strings.Contains(stdout, "PASS") {
				t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
			}
			bad := filepath.Join(dir, "bad.onnx")
			swapKVInSubgraphs(t, out, bad)
			code, stdout, stderr = runCLI("validate", in, bad, "--quiet")
			if code != 1 || !strings.Contains(stderr, "validation failed: "+tc.paths[0]) {
				t.Errorf("validate of swapped K/V: exit %d, want 1\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// The GPT-2 decoder inside ONNX Runtime's BeamSearch holds com.microsoft
// Attention ops that are not sites: inspect lists each with why, and
// rewrite writes the model unchanged (exit 0).
func TestCLIBeamSearchDecoderKept(t *testing.T) {
	in := corpus.Path(t, "onnxruntime", "tiny_gpt2_beamsearch.onnx")
	code, stdout, stderr := runCLI("inspect", in)
	// Each with the reason it stays: no lift rule, or the rule's refusal.
	if code != 0 || strings.Count(stdout, "in subgraph BeamSearch BeamSearch_gpt2/decoder: com.microsoft.Attention GptAttention_") != 5 ||
		strings.Count(stdout, ", not a site: ") != 5 {
		t.Errorf("inspect: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("rewrite", in, "-o", filepath.Join(t.TempDir(), "out.onnx"), "--quiet", "--min-scores", "0")
	if code != 0 || !strings.Contains(stdout, "no attention site found; wrote the model unchanged") {
		t.Errorf("rewrite: exit %d\n%s%s", code, stdout, stderr)
	}
}
