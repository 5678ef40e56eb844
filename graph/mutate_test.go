package graph_test

import (
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
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

// TestSymbolicFoldOfEmptyVector: shape arithmetic of an empty vector with
// a one-entry vector folds to an empty vector (numpy broadcasting), for
// every folded op; it indexed entry -1 and panicked while loading (found by
// FuzzLoad and FuzzRewrite, whose inputs are kept under testdata/fuzz/).
func TestSymbolicFoldOfEmptyVector(t *testing.T) {
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Equal"} {
		for _, emptyFirst := range []bool{true, false} {
			b := testgraph.New(17)
			x := b.Input("x", graph.Float32, "n", 3)
			empty := b.Node("Slice", []string{b.Node("Shape", []string{x}), b.I64(0), b.I64(0)})
			one := b.Node("Slice", []string{b.Node("Shape", []string{x}), b.I64(0), b.I64(1)})
			ins := []string{empty, one}
			if !emptyFirst {
				ins = []string{one, empty}
			}
			out := b.Node(op, ins)
			b.Output(out)
			m := b.Model()
			got, ok := m.Graph.Value(out).IntContent()
			if !ok || len(got) != 0 {
				t.Errorf("%s (empty first %v): content %v (%v), want an empty vector", op, emptyFirst, got, ok)
			}
		}
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

// TestRemovingAnAliasKeepsTheName: a file that defines a name twice with a
// Constant nothing reads afterwards (ORT's gpt2_past test model) loads the
// copy as an unregistered alias; removing it, by RemoveNode or RemoveDead,
// must leave the registered definition's name (it used to delete the
// name, so the rewrite failed verify: "value 284 is not registered").
func TestRemovingAnAliasKeepsTheName(t *testing.T) {
	for _, remove := range []string{"RemoveNode", "RemoveDead"} {
		b := testgraph.New(17)
		x := b.Input("x", graph.Float32, 2)
		c := b.Node("Constant", nil, testgraph.Tensor("value", graph.Float32, 2))
		y := b.Node("Mul", []string{x, c})
		b.Output(y)
		b.Node("Constant", nil, testgraph.Tensor("value", graph.Float32, 3))
		p := b.Proto()
		p.Graph.Node[2].Output[0] = c // the second definition of c, read by nothing after it
		data, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := graph.LoadBytes(data, "")
		if err != nil {
			t.Fatal(err)
		}
		g := m.Graph
		if err := g.Verify(); err != nil {
			t.Fatal(err)
		}
		var alias *graph.Node
		for _, n := range g.Nodes {
			if n.Is("Constant") && g.Value(n.Output(0).Name) != n.Output(0) {
				alias = n
			}
		}
		if alias == nil {
			t.Fatal("no alias loaded")
		}
		if remove == "RemoveNode" {
			g.RemoveNode(alias)
		} else if n := g.RemoveDead(); n != 1 {
			t.Fatalf("RemoveDead removed %d nodes, want the alias", n)
		}
		if err := g.Verify(); err != nil {
			t.Errorf("%s: %v", remove, err)
		}
	}
}
