package passes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

// The grid recovered from every spatial fixture matches the token grid the
// export script recorded from the PyTorch module.
func TestGridRecoveryMatchesManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "MANIFEST.json"))
	if err != nil {
		t.Skip("testdata/MANIFEST.json not present")
	}
	var man struct {
		Models []struct {
			Name, File string
			Symbolic   map[string]any `json:"symbolic_shapes"`
			Attention  []struct {
				Grid  []int64 `json:"grid"`
				Order string  `json:"token_order"`
			} `json:"attention"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, fx := range man.Models {
		var want []string
		for _, a := range fx.Attention {
			if len(a.Grid) > 0 {
				want = append(want, fmt.Sprintf("%v %s", a.Grid, a.Order))
			}
		}
		if len(want) == 0 || len(fx.Symbolic) > 0 {
			continue // sequences, or grids that need --dim to pin
		}
		m, err := graph.Load(filepath.Join("..", "testdata", fx.File))
		if err != nil {
			t.Fatal(err)
		}
		res := FindSites(m.Graph)
		if len(res.Sites) == 0 {
			continue // already fused in the export (opset-23 Attention)
		}
		var got []string
		for _, s := range res.Sites {
			if g := RecoverGrid(s); g != nil {
				if !g.Proven {
					t.Errorf("%s: grid %v not proven: %s", fx.Name, g.Dims, g.Reason)
				}
				got = append(got, fmt.Sprintf("%v %s", g.Dims, g.Order))
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: grids %v, manifest %v", fx.Name, got, want)
		}
		checked++
	}
	t.Logf("%d spatial fixtures checked", checked)
	if checked < 15 {
		t.Errorf("only %d spatial fixtures checked", checked)
	}
}
