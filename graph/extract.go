package graph

import (
	"fmt"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// Extract builds a standalone model computing outputs from m: it walks back
// from the outputs and turns every value for which stop returns true (and
// every graph input reached) into an input of the new model, unless its
// producer is kept for another value; initializers
// reached are kept. Types come from m's inference. The new model shares
// opset imports with m.
func Extract(m *Model, outputs []string, stop func(v *Value) bool) (*Model, error) {
	g := m.Graph
	nodes := map[*Node]bool{}
	inputs := map[string]*Value{}
	inits := map[string]*Value{}
	var stack []*Value
	for _, name := range outputs {
		v := g.values[name]
		if v == nil {
			return nil, fmt.Errorf("extract: no value %q", name)
		}
		stack = append(stack, v)
	}
	seen := map[*Value]bool{}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		switch {
		case v.Kind == KindInit:
			inits[v.Name] = v
			continue
		case v.Kind == KindInput || stop(v):
			inputs[v.Name] = v
			continue
		}
		p := v.producer
		if p == nil {
			return nil, fmt.Errorf("extract: %q has no producer", v.Name)
		}
		if len(p.outer) > 0 {
			return nil, fmt.Errorf("extract: node %q has subgraphs", p.Label())
		}
		nodes[p] = true
		for _, in := range p.Inputs {
			if in != nil {
				stack = append(stack, in)
			}
		}
	}
	// A stop value whose producer is kept anyway (it also computes a value
	// walked through: EmbedLayerNormalization's output and its mask index)
	// is computed, not an input as well.
	for name, v := range inputs {
		if v.Kind != KindInput && v.producer != nil && nodes[v.producer] {
			delete(inputs, name)
		}
	}
	gp := &onnxpb.GraphProto{Name: proto.String("extract")}
	order, err := g.TopoOrder()
	if err != nil {
		return nil, err
	}
	for _, n := range order {
		if nodes[n] {
			np := n.toProto()
			np.Name = proto.String(n.Name)
			gp.Node = append(gp.Node, np)
		}
	}
	for _, v := range g.Inputs {
		if inputs[v.Name] != nil {
			gp.Input = append(gp.Input, &onnxpb.ValueInfoProto{Name: proto.String(v.Name), Type: typeToProto(v.Type)})
		}
	}
	for _, name := range sortedKeys(inputs) {
		if v := inputs[name]; v.Kind != KindInput {
			gp.Input = append(gp.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: typeToProto(v.Type)})
		}
	}
	for _, v := range g.Inits {
		if inits[v.Name] != nil {
			gp.Initializer = append(gp.Initializer, v.Const.toProto(v.Name))
		}
	}
	for _, name := range outputs {
		gp.Output = append(gp.Output, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: typeToProto(g.values[name].Type)})
	}
	mp := &onnxpb.ModelProto{IrVersion: proto.Int64(m.IRVersion), Graph: gp}
	for _, o := range m.Opsets {
		mp.OpsetImport = append(mp.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(o.Domain), Version: proto.Int64(o.Version)})
	}
	return FromProto(mp, m.src.dir)
}

func sortedKeys(m map[string]*Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
