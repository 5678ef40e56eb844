package passes

import (
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
)

// NestedOp is attention found inside a subgraph attribute (If/Loop/Scan
// bodies, com.microsoft BeamSearch/GreedySearch decoders). Subgraphs are
// kept byte for byte and not rewritten; they are listed so a user sees what
// stays naive.
type NestedOp struct {
	Path string // enclosing node and attribute, outermost first: "If n/then_branch"
	Op   string // "domain.Op"
	Node string
}

// findNested lists fused attention ops and Softmax nodes inside g's
// subgraph attributes, at any depth.
func findNested(g *graph.Graph) []NestedOp {
	has := false
	for _, n := range g.Nodes {
		for _, a := range n.Attrs {
			has = has || a.Kind == graph.AttrGraph
		}
	}
	if !has {
		return nil
	}
	var out []NestedOp
	for _, n := range g.Model().ToProto().GetGraph().GetNode() {
		out = appendNested(out, n, "")
	}
	return out
}

func appendNested(out []NestedOp, n *onnxpb.NodeProto, path string) []NestedOp {
	for _, a := range n.GetAttribute() {
		subs := a.GetGraphs()
		if a.GetG() != nil {
			subs = append([]*onnxpb.GraphProto{a.GetG()}, subs...)
		}
		for _, sg := range subs {
			p := path
			if p != "" {
				p += " / "
			}
			p += n.GetOpType() + " " + n.GetName() + "/" + a.GetName()
			for _, m := range sg.GetNode() {
				node := &graph.Node{OpType: m.GetOpType(), Domain: m.GetDomain(), Name: m.GetName()}
				if IsFusedAttention(node) || node.Is("Softmax") {
					out = append(out, NestedOp{Path: p, Op: opName(node), Node: m.GetName()})
				}
				out = appendNested(out, m, p)
			}
		}
	}
	return out
}
