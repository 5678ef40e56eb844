package match

import (
	"fmt"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
)

// NestedOp is attention found inside a subgraph attribute (If branches,
// Loop/Scan bodies, com.microsoft BeamSearch/GreedySearch decoders): a fused
// attention op or a Softmax. Each subgraph is matched as a model of its own
// (graph/subgraph.go); Site is the site the op belongs to, which rewrite
// fuses in place, or nil with Reason saying why not.
type NestedOp struct {
	Path   string // enclosing node and attribute, outermost first: "If n/then_branch / Loop l/body"
	Op     string // "domain.Op"
	Node   string
	Site   *Match
	Reason string
}

// NestedSites lists the sites among ops.
func NestedSites(ops []NestedOp) []*Match {
	var out []*Match
	for _, o := range ops {
		if o.Site != nil {
			out = append(out, o.Site)
		}
	}
	return out
}

// SubgraphHolders lists g's nodes that have graph attributes, in file
// order: the order nested sites are numbered in, by inspect and rewrite
// alike.
func SubgraphHolders(g *graph.Graph) []*graph.Node {
	var out []*graph.Node
	for _, n := range g.Nodes {
		if n.HasSubgraphs() {
			out = append(out, n)
		}
	}
	return out
}

// ScopePath names one subgraph attribute of n below the path of n's graph
// (Site.Path).
func ScopePath(parent string, n *graph.Node, s *graph.Subgraph) string {
	name := n.Name
	if name == "" {
		name = n.Label()
	}
	p := n.OpType + " " + name + "/" + s.Attr
	if s.Index >= 0 {
		p += fmt.Sprintf("[%d]", s.Index)
	}
	return join(parent, p)
}

// findNested matches every subgraph of g, whose scope path is path, at
// any depth; its sites are numbered from next on.
func findNested(g *graph.Graph, path string, next int) []NestedOp {
	var out []NestedOp
	for _, n := range SubgraphHolders(g) {
		subs, err := g.Subgraphs(n, nil)
		if err != nil {
			// Still listed, from the protobuf, with why it stays naive.
			for _, a := range n.Attrs {
				for _, gp := range a.GraphProtos() {
					for _, op := range listNested(nil, join(path, n.OpType+" "+n.Name+"/"+a.Name), gp) {
						op.Reason = "the subgraph cannot be analysed: " + err.Error()
						out = append(out, op)
					}
				}
			}
			continue
		}
		for _, s := range subs {
			sub := ScopePath(path, n, s)
			r := Find(s.Model.Graph, Scope{Path: sub, Next: next})
			next += len(r.Sites) + len(NestedSites(r.Nested))
			out = append(out, r.asNested(sub)...)
		}
	}
	return out
}

func join(parent, p string) string {
	if parent == "" {
		return p
	}
	return parent + " / " + p
}

// asNested lists what the match of the subgraph at path found, as seen
// from outside it.
func (r *Result) asNested(path string) []NestedOp {
	var out []NestedOp
	for _, s := range r.Sites {
		n := s.Softmax
		if s.Lifted != nil {
			n = s.Lifted
		}
		out = append(out, NestedOp{Path: path, Op: opName(n), Node: n.Label(), Site: s})
	}
	why := map[*graph.Node]string{}
	for _, rej := range r.Rejected {
		why[rej.Softmax] = rej.Reason
	}
	for _, n := range r.Fused {
		reason, ok := why[n]
		switch {
		case ok:
		case liftRuleFor(n) == nil:
			reason = "already fused; attnopt has no rule to lift " + opName(n) + " into a site, so it is kept"
		default:
			reason = "already fused, and memory-efficient in its runtime; kept"
		}
		out = append(out, NestedOp{Path: path, Op: opName(n), Node: n.Label(), Reason: reason})
		delete(why, n)
	}
	for _, rej := range r.Rejected {
		if _, ok := why[rej.Softmax]; ok {
			out = append(out, NestedOp{Path: path, Op: opName(rej.Softmax), Node: rej.Softmax.Label(), Reason: rej.Reason})
		}
	}
	return append(out, r.Nested...)
}

// listNested lists fused attention ops and Softmax nodes of a subgraph that
// cannot be wrapped, at any depth.
func listNested(out []NestedOp, path string, sg *onnxpb.GraphProto) []NestedOp {
	for _, m := range sg.GetNode() {
		node := &graph.Node{OpType: m.GetOpType(), Domain: m.GetDomain(), Name: m.GetName()}
		if IsFusedAttention(node) || node.Is("Softmax") {
			out = append(out, NestedOp{Path: path, Op: opName(node), Node: m.GetName()})
		}
		for _, a := range m.GetAttribute() {
			for _, sub := range append([]*onnxpb.GraphProto{a.GetG()}, a.GetGraphs()...) {
				if sub != nil {
					out = listNested(out, path+" / "+m.GetOpType()+" "+m.GetName()+"/"+a.GetName(), sub)
				}
			}
		}
	}
	return out
}
