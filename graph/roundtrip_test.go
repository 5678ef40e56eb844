package graph

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/corpus"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// corpusModels lists the third-party models beside the repo; tests using it
// skip when the folder is absent.
func corpusModels(t testing.TB) []string {
	root := corpus.Require(t)
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".onnx" {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestRoundTripCorpus(t *testing.T) {
	for _, path := range corpusModels(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadBytes(data, filepath.Dir(path))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if err := m.Graph.Verify(); err != nil {
			t.Errorf("%s: verify: %v", path, err)
		}
		want := &onnxpb.ModelProto{}
		if err := proto.Unmarshal(data, want); err != nil {
			t.Fatal(err)
		}
		if got := m.ToProto(); !proto.Equal(want, got) {
			t.Errorf("%s: round trip changed the model:\n%s", path, cmp.Diff(want, got, protocmp.Transform()))
		}
	}
}
