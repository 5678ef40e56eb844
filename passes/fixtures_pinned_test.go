package passes

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// testInputShapes reads the shapes of a fixture's test_data_set_0 inputs,
// by graph input name (scalars, which have nothing to pin, left out).
func testInputShapes(t *testing.T, fixtureDir string) map[string][]int64 {
	t.Helper()
	shapes := map[string][]int64{}
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "test_data_set_0", "input_*.pb"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tp onnxpb.TensorProto
		if err := proto.Unmarshal(data, &tp); err != nil {
			t.Fatal(err)
		}
		if len(tp.Dims) > 0 {
			shapes[tp.GetName()] = tp.Dims
		}
	}
	return shapes
}

func siteLabels(res *Result) []string {
	var out []string
	for _, s := range res.Sites {
		out = append(out, s.Softmax.Label())
	}
	for _, n := range res.Fused {
		out = append(out, "fused "+n.Label())
	}
	for _, s := range NestedSites(res.Nested) {
		out = append(out, "nested "+s.Softmax.Label())
	}
	sort.Strings(out)
	return out
}

// Pinning every input of every fixture to the shape it really has (its test
// data's, as --shape gives it) never loses a site, a fused op or a nested
// site, and every pinned site's memory is known.
func TestFixturesPinnedKeepSites(t *testing.T) {
	man := loadManifest(t)
	for _, fx := range man.Models {
		t.Run(fx.Name, func(t *testing.T) {
			path := filepath.Join("..", "testdata", fx.File)
			m, err := graph.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			free := siteLabels(FindSites(m.Graph))
			pinned, err := graph.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := (graph.Pins{Shapes: testInputShapes(t, filepath.Dir(path))}).Apply(pinned.Graph); err != nil {
				t.Fatal(err)
			}
			res := FindSites(pinned.Graph)
			have := map[string]bool{}
			for _, l := range siteLabels(res) {
				have[l] = true
			}
			for _, l := range free {
				if !have[l] {
					for _, r := range res.Rejected {
						t.Log(r.Softmax.Label(), ": ", r.Reason)
					}
					t.Errorf("pinned, %s is no longer a site (unpinned: %v)", l, free)
				}
			}
			for _, s := range append(append([]*Site(nil), res.Sites...), NestedSites(res.Nested)...) {
				if _, ok := s.ScoreBytes(); !ok {
					t.Errorf("pinned site %s: scores of unknown size (B %s, H %s, Nq %s, Nk %s)", s.Softmax.Label(), s.Batch, s.Heads, s.QLen, s.KVLen)
				}
				if _, ok := s.FusedBytes(); !ok {
					t.Errorf("pinned site %s: fused memory unknown", s.Softmax.Label())
				}
			}
		})
	}
}
