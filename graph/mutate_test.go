package graph_test

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

func TestMutationKeepsGraphValid(t *testing.T) {
	m := testgraph.SAGAN(17, 16, 4, 4).Model()
	g := m.Graph
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	// Replace the softmax with an Identity of its input, then drop what died.
	var sm *graph.Node
	for _, n := range g.Nodes {
		if n.Is("Softmax") {
			sm = n
		}
	}
	out := g.NewValue("probs", sm.Output(0).Type)
	g.AddNode("Identity", "", "replacement", []*graph.Value{sm.Input(0)}, []*graph.Value{out})
	g.ReplaceAllUses(sm.Output(0), out)
	if err := g.Sort(); err != nil {
		t.Fatal(err)
	}
	if removed := g.RemoveDead(); removed != 1 {
		t.Fatalf("removed %d nodes, want the softmax only", removed)
	}
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Is("Softmax") {
			t.Fatal("softmax still present")
		}
	}
	// The rewritten model serializes and reloads to the same graph.
	data, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Graph.Nodes) != len(g.Nodes) {
		t.Fatalf("reloaded %d nodes, want %d", len(m2.Graph.Nodes), len(g.Nodes))
	}
	// Verify catches a broken use list.
	g.Nodes = g.Nodes[1:]
	if err := g.Verify(); err == nil {
		t.Fatal("verify accepted a graph whose node was dropped without detaching it")
	}
}

func TestShapeFoldingOfDynamicScale(t *testing.T) {
	// scale = 1/sqrt(q.shape[-1]) as Shape → Slice → Cast → Sqrt → Div.
	b := testgraph.New(17)
	q := b.Input("q", graph.Float32, "batch", 4, "seq", 16)
	sh := b.Node("Shape", []string{q})
	last := b.Node("Slice", []string{sh, b.I64(-1), b.I64(9223372036854775807)})
	f := b.Node("Cast", []string{last}, testgraph.Int("to", int64(graph.Float32)))
	s := b.Node("Sqrt", []string{f})
	inv := b.Node("Div", []string{b.Scalar(1), s})
	b.Output(inv)
	m := b.Model()
	got, ok := m.Graph.Value(inv).Scalar()
	if !ok || got != 0.25 {
		t.Fatalf("folded scale = %v (%v), want 0.25", got, ok)
	}
}

func TestSymbolicReshape(t *testing.T) {
	b := testgraph.HFSelfAttention(17, "batch", "seq", 64, 4)
	m := b.Model()
	got := m.Graph.Value("out").Type.Shape.String()
	if got != "[batch,seq,64]" {
		t.Fatalf("out shape = %s, want [batch,seq,64]", got)
	}
}
