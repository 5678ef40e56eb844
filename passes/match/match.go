package match

import (
	"fmt"
	"sort"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes/match/masks"
)

// Result is what the matcher found in a graph.
type Result struct {
	Sites    []*Match
	Fused    []*graph.Node
	Rejected []*Reject
	// Nested is attention inside subgraphs (nested.go), with the sites
	// rewrite fuses there.
	Nested []NestedOp
}

// Scope places a graph in its model: the subgraph path ("" for the main
// graph) and the ID its first site takes. Sites of subgraphs below it are
// numbered after its own.
type Scope struct {
	Path string
	Next int
}

// FindSites matches every Softmax (and fused attention op) of g, the main
// graph, against the rules.
func FindSites(g *graph.Graph) *Result { return Find(g, Scope{}) }

// Find matches g as the graph sc places.
func Find(g *graph.Graph, sc Scope) *Result {
	m := &matcher{g: g, opset: g.Model().Opset("")}
	res := &Result{}
	order, err := g.TopoOrder()
	if err != nil {
		order = g.Nodes
	}
	claimed := map[*graph.Node]bool{}
	add := func(site *Match) {
		site.ID, site.Path = sc.Next+len(res.Sites), sc.Path
		res.Sites = append(res.Sites, site)
	}
	for _, n := range order {
		if IsFusedAttention(n) {
			site, rej := liftFused(m.g, n)
			switch {
			case site != nil && !overlaps(site, claimed):
				claimed[n] = true
				add(site)
			case rej != nil:
				rej.Softmax = n
				res.Rejected = append(res.Rejected, rej)
				res.Fused = append(res.Fused, n)
			default:
				res.Fused = append(res.Fused, n)
			}
			continue
		}
		if !n.Is("Softmax") {
			continue
		}
		site, rej := m.matchSoftmax(n)
		if rej != nil {
			rej.Softmax = n
			res.Rejected = append(res.Rejected, rej)
			continue
		}
		if overlaps(site, claimed) {
			rej := reject(CodeOverlap, n, "shares nodes with another site")
			rej.Softmax = n
			res.Rejected = append(res.Rejected, rej)
			continue
		}
		for _, x := range site.Nodes {
			claimed[x] = true
		}
		add(site)
	}
	res.Nested = findNested(g, sc.Path, sc.Next+len(res.Sites))
	return res
}

func overlaps(s *Match, claimed map[*graph.Node]bool) bool {
	for _, n := range s.Nodes {
		if claimed[n] {
			return true
		}
	}
	return false
}

type matcher struct {
	g     *graph.Graph
	opset int64
}

// matchSoftmax runs the families in data-flow order: softmax semantics,
// the score chain back to the QK product, then the PV product; the fix-ups
// (fixups.go) then settle the site.
func (m *matcher) matchSoftmax(sm *graph.Node) (*Match, *Reject) {
	s := &draft{Match: Match{Softmax: sm}}
	nodes := []*graph.Node{sm}
	if r := m.checkSoftmaxAxis(sm); r != nil {
		return nil, r
	}
	if r := probSparse(sm); r != nil {
		return nil, r
	}
	pre, r := m.matchScoreChain(sm.Input(0), s)
	if r != nil {
		return nil, r
	}
	nodes = append(nodes, pre...)
	post, r := m.matchOutput(sm.Output(0), s)
	if r != nil {
		return nil, r
	}
	nodes = append(nodes, post...)
	nodes = append(nodes, s.extra...)
	if r := runFixups(s); r != nil {
		return nil, r
	}
	pos := map[*graph.Node]int{}
	for i, n := range m.g.Nodes {
		pos[n] = i
	}
	sort.SliceStable(nodes, func(i, j int) bool { return pos[nodes[i]] < pos[nodes[j]] })
	s.Nodes = nodes
	s.Variant = variantName(s)
	return s.done(), nil
}

// onlyUse checks that v is read once, by n, and is no graph output: a score
// or probability tensor read elsewhere cannot disappear into a fused op.
func (m *matcher) onlyUse(v *graph.Value) *Reject {
	for _, o := range m.g.Outputs {
		if o == v {
			return reject(CodeIntermediate, v, "the intermediate %q is a graph output", v.Name)
		}
	}
	uses := dataUses(v)
	if len(uses) == 0 {
		return reject(CodeIntermediate, v, "nothing reads the intermediate %q", v.Name)
	}
	if len(uses) != 1 {
		other := uses[len(uses)-1].Node.Label()
		return reject(CodeIntermediate, v, "the intermediate %q is also used elsewhere (by node %q); fusing would drop it", v.Name, other)
	}
	return nil
}

func variantName(s *draft) string {
	v := s.ScoreOp
	if s.KTransposed {
		v += "/kt"
	}
	v += formSuffix(s, string(s.maskForm))
	if s.Repeated != nil {
		v += "/gqa"
	}
	if s.KVBroadcast {
		v += "/kv-shared"
	}
	if s.Perm.Any() {
		v += "/permuted"
	}
	if s.SoftCasts {
		v += "/cast-f32"
	}
	if s.VChannelsFirst {
		v += "/v-channels-first"
	}
	return v
}

// formSuffix names a site's scale, mask (as mask, when it has one),
// causal and sliding-window forms: the part of a variant name that matched
// and lifted sites share.
func formSuffix(s *draft, mask string) string {
	v := "/scale-" + s.ScaleForm.String()
	if s.Softcap > 0 {
		v += fmt.Sprintf("/softcap-%g", s.Softcap)
	}
	if s.Mask() != masks.None {
		v += "/mask-" + mask
	}
	if s.Causal {
		v += "/causal"
	}
	if s.SlidingWindow > 0 {
		v += fmt.Sprintf("/sliding-window-%d", s.SlidingWindow)
	}
	return v
}

// dataUses are the uses of v that read its contents. Shape and Size read
// only its shape, which the rewrite recomputes from Q, K and V; CastLike's
// second input only lends its type.
func dataUses(v *graph.Value) []graph.Use {
	var out []graph.Use
	for _, u := range v.Uses() {
		if u.Index >= 0 && (u.Node.Is("Shape") || u.Node.Is("Size") || (u.Node.Is("CastLike") && u.Index == 1)) {
			continue
		}
		out = append(out, u)
	}
	return out
}
