package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
	"google.golang.org/protobuf/proto"
)

// corruptNested applies corrupt to the fused nodes inside every subgraph,
// through the same wrap-and-inline the rewrite uses.
func corruptNested(t *testing.T, m *graph.Model, how string) {
	if err := testgraph.EditSubgraphs(m, func(sub *graph.Model) { corrupt(sub, how) }); err != nil {
		t.Fatal(err)
	}
}

// Sites inside If branches and a Loop body are validated by running each
// rewritten subgraph against its original (both branches, whatever the
// model's inputs pick); the verdict holds for a model whose only sites are
// nested, in both scopes and both runtimes, and a rewrite with K and V
// swapped or the scale doubled inside the subgraphs fails.
func TestValidateNestedSites(t *testing.T) {
	ortR, customOK := ortRunner(t)
	for _, tc := range []struct {
		fixture string
		checks  []string // the per-subgraph checks, in order (one site each)
	}{
		{"cond_if_dynamo", []string{"If node_cond__0/then_branch (site 0)", "If node_cond__0/else_branch (site 1)"}},
		{"cond_dynamo_op23", []string{"If node_cond__0/then_branch (site 0)", "If node_cond__0/else_branch (site 1)"}},
		{"loop_script", []string{"Loop Loop_10/body (site 0)"}},
	} {
		path := filepath.Join("..", "testdata", "models", tc.fixture, "model.onnx")
		for _, target := range []string{"attnopt", "ort"} {
			for _, how := range []string{"", "swap-kv", "double-scale"} {
				orig, err := graph.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				rew, _ := graph.Load(path)
				if c, err := passes.Rewrite(rew, passes.Options{Target: target}); err != nil || c.FusedCount() != len(tc.checks) {
					t.Fatalf("%s/%s: rewrite: %v", tc.fixture, target, err)
				}
				corruptNested(t, rew, how)
				runners := []validate.Runner{validate.GoRunner{}}
				if ortR != nil && (target != "attnopt" || customOK) {
					runners = append(runners, ortR)
				}
				for _, r := range runners {
					for _, scope := range []string{"sites", "model"} {
						name := strings.Join([]string{tc.fixture, target, how, r.Name(), scope}, "/")
						rep := validate.Validate(orig, rew, r, validate.Options{Scope: scope, Seed: 5})
						if want := how == ""; rep.Pass != want || rep.NoChecks {
							t.Errorf("%s: pass=%v (no checks %v), want %v: %+v", name, rep.Pass, rep.NoChecks, want, rep.Checks)
						}
						var got []string
						for _, c := range rep.Checks {
							if c.Name != "model" {
								got = append(got, c.Name)
							}
						}
						if strings.Join(got, "|") != strings.Join(tc.checks, "|") {
							t.Errorf("%s: checks %q, want %q", name, got, tc.checks)
						}
					}
				}
			}
		}
	}
}

// An unnamed If is found in the rewrite by its output: its branches are
// still checked (not NO CHECKS), and a corrupted one still fails.
func TestValidateNestedUnnamedIf(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "models", "cond_if_dynamo", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		t.Fatal(err)
	}
	for _, n := range mp.Graph.Node {
		if n.GetOpType() == "If" {
			n.Name = nil
		}
	}
	data, _ = proto.Marshal(&mp)
	for _, how := range []string{"", "swap-kv"} {
		orig, err := graph.LoadBytes(data, "")
		if err != nil {
			t.Fatal(err)
		}
		rew, _ := graph.LoadBytes(data, "")
		if c, err := passes.Rewrite(rew, passes.Options{Target: "attnopt"}); err != nil || c.FusedCount() != 2 {
			t.Fatalf("rewrite: %v", err)
		}
		corruptNested(t, rew, how)
		rep := validate.Validate(orig, rew, validate.GoRunner{}, validate.Options{Seed: 2})
		if rep.NoChecks || len(rep.Checks) != 2 || rep.Pass != (how == "") || !strings.HasPrefix(rep.Checks[0].Name, "If If→y/then_branch (site 0)") {
			t.Errorf("%q: pass %v, no checks %v: %+v", how, rep.Pass, rep.NoChecks, rep.Checks)
		}
	}
}
