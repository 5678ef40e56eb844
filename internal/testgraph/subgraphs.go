package testgraph

import "github.com/attnopt/attnopt/graph"

// EditSubgraphs applies edit to every subgraph of m's nodes (wrapped as a
// model, graph/subgraph.go) and writes each back: tests corrupt nested
// rewrites with it.
func EditSubgraphs(m *graph.Model, edit func(sub *graph.Model)) error {
	for _, n := range m.Graph.Nodes {
		if !n.HasSubgraphs() {
			continue
		}
		subs, err := m.Graph.Subgraphs(n, nil)
		if err != nil {
			return err
		}
		for _, s := range subs {
			edit(s.Model)
			if err := s.Inline(); err != nil {
				return err
			}
		}
	}
	return nil
}
