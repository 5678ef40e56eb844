package passes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// manifest is testdata/MANIFEST.json: attention counted in PyTorch during
// export, not by attnopt.
type manifest struct {
	Models []struct {
		Name           string `json:"name"`
		File           string `json:"file"`
		AttentionCount int    `json:"attention_count"`
		FusableCount   *int   `json:"fusable_count"`
		Attention      []struct {
			Mask    string `json:"mask"`
			Heads   int64  `json:"heads"`
			KVHeads int64  `json:"kv_heads"`
			Bias    string `json:"bias"`
			Window  int64  `json:"window"`
			Fusable *bool  `json:"fusable"` // false: not fusable by design (why_not_fusable)
		} `json:"attention"`
	} `json:"models"`
}

func loadManifest(t *testing.T) manifest {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "MANIFEST.json"))
	if err != nil {
		t.Skip("testdata/MANIFEST.json not present")
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Every PyTorch-exported fixture round-trips and inspect finds exactly the
// attention PyTorch counted: as sites, or as already-fused ops where the
// exporter emitted ONNX Attention (dynamo, opset 23).
func TestFixturesMatchManifest(t *testing.T) {
	man := loadManifest(t)
	if len(man.Models) < 20 {
		t.Fatalf("manifest lists %d models, want at least 20", len(man.Models))
	}
	for _, fx := range man.Models {
		t.Run(fx.Name, func(t *testing.T) {
			path := filepath.Join("..", "testdata", fx.File)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := graph.LoadBytes(data, filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			var want onnxpb.ModelProto
			if err := proto.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if got := m.ToProto(); !proto.Equal(&want, got) {
				t.Fatalf("round trip changed the model:\n%s", cmp.Diff(&want, got, protocmp.Transform()))
			}
			res := FindSites(m.Graph)
			// fusable_count leaves out attention that must not be fused
			// (its probabilities are a graph output, say).
			wantSites := fx.AttentionCount
			if fx.FusableCount != nil {
				wantSites = *fx.FusableCount
			}
			// Attention inside If/Loop bodies counts too: their sites are
			// rewritten in place (rewrite_nested.go).
			if got := len(res.Sites) + len(res.Fused) + len(NestedSites(res.Nested)); got != wantSites {
				for _, r := range res.Rejected {
					t.Log(r.Softmax.Label(), ": ", r.Reason)
				}
				t.Fatalf("found %d sites + %d fused + %d in subgraphs, want %d (PyTorch counted %d)", len(res.Sites), len(res.Fused), len(NestedSites(res.Nested)), wantSites, fx.AttentionCount)
			}
		})
	}
}
