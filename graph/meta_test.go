package graph_test

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// Metadata set on a loaded node survives a save and reload, replaces an
// existing key in place, and does not touch the model as first loaded.
func TestNodeMetaRoundTrip(t *testing.T) {
	m := testgraph.SAGAN(17, 16, 4, 4).Model()
	n := m.Graph.Nodes[0]
	n.SetMeta("attnopt.site", "3")
	n.SetMeta("attnopt.plan", "exact")
	n.SetMeta("attnopt.site", "4")
	data, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	r := back.Graph.Nodes[0]
	for key, want := range map[string]string{"attnopt.site": "4", "attnopt.plan": "exact", "other": ""} {
		if got := r.Meta(key); got != want {
			t.Errorf("Meta(%q) = %q, want %q", key, got, want)
		}
	}
	if got := m.Graph.Nodes[1].Meta("attnopt.site"); got != "" {
		t.Errorf("an untouched node has meta %q", got)
	}
}
