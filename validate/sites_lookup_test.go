package validate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/passes"
	"github.com/attnopt/attnopt/validate"
	"google.golang.org/protobuf/proto"
)

// renameUnfused gives every node of m but the fused ones, and every value
// those nodes compute (graph outputs aside), a new name: what a cleanup that
// folds and rebuilds nodes after the site leaves of the names validate's
// lookup follows.
func renameUnfused(t *testing.T, m *graph.Model) *graph.Model {
	t.Helper()
	data, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var pb onnxpb.ModelProto
	if err := proto.Unmarshal(data, &pb); err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	for _, o := range pb.Graph.Output {
		keep[o.GetName()] = true
	}
	renamed := map[string]string{}
	for _, n := range pb.Graph.Node {
		if n.GetDomain() == "attnopt" || n.GetDomain() == "com.microsoft" || n.GetOpType() == "Attention" {
			continue
		}
		n.Name = proto.String("folded/" + n.GetName())
		for i, o := range n.Output {
			if o != "" && !keep[o] {
				renamed[o] = "folded/" + o
				n.Output[i] = renamed[o]
			}
		}
	}
	for _, n := range pb.Graph.Node {
		for i, in := range n.Input {
			if r, ok := renamed[in]; ok {
				n.Input[i] = r
			}
		}
	}
	for _, vi := range pb.Graph.ValueInfo {
		if r, ok := renamed[vi.GetName()]; ok {
			vi.Name = proto.String(r)
		}
	}
	data, err = proto.Marshal(&pb)
	if err != nil {
		t.Fatal(err)
	}
	out, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// validate finds each rewritten site by the attnopt.site its fused node
// records when no name around the site survives, and the check still
// compares numbers (a swapped K and V still fails).
func TestSitesFoundWithoutNames(t *testing.T) {
	for _, tc := range []struct{ fixture, target string }{
		{"sdpa_h16d4", "attnopt"}, {"hf_gpt2", "ort"}, {"timm_vit", "attnopt"}, {"hf_bert_dynamic", "ort"},
		{"sdpa_causal", "gqa"}, {"hf_llama_gqa", "attnopt"},
	} {
		t.Run(tc.fixture+"/"+tc.target, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "models", tc.fixture, "model.onnx")
			orig, err := graph.Load(path)
			if err != nil {
				t.Skip(err)
			}
			rew, _ := graph.Load(path)
			if _, err := passes.Rewrite(rew, passes.Options{Target: tc.target}); err != nil {
				t.Fatal(err)
			}
			rew = renameUnfused(t, rew)
			rep := validate.Validate(orig, rew, validate.GoRunner{}, validate.Options{Scope: "sites", Seed: 5})
			if len(rep.Checks) == 0 {
				t.Fatal("no checks")
			}
			for _, c := range rep.Checks {
				if !c.Pass || c.Error != "" {
					t.Errorf("%s: pass=%v %s", c.Name, c.Pass, c.Error)
				}
			}
			corrupt(rew, "swap-kv")
			rep = validate.Validate(orig, rew, validate.GoRunner{}, validate.Options{Scope: "sites", Seed: 5})
			if rep.Pass {
				t.Error("K and V swapped, still passes")
			}
			for _, c := range rep.Checks {
				if strings.Contains(c.Error, "cannot find") {
					t.Errorf("%s: %s", c.Name, c.Error)
				}
			}
		})
	}
}
