package validate

import (
	"fmt"
	"slices"

	"github.com/attnopt/attnopt/graph"
)

// untouchedChanges lists what changed outside the rewrite's own work, which
// site-by-site numerics never run: a node keeping its name, op and inputs
// must keep its attributes, and an initializer keeping its name its type
// and bytes. Large external tensors (over maxCompareBytes) are compared by
// type and dims only. The graph attributes of the nodes in checked were
// compared by running them (nestedChecks) and are not listed.
func untouchedChanges(orig, rew *graph.Model, checked map[string]bool) []string {
	const maxCompareBytes = 256 << 20
	byName := map[string]*graph.Node{}
	for _, n := range orig.Graph.Nodes {
		if n.Name != "" {
			byName[n.Name] = n
		}
	}
	var out []string
	for _, n := range rew.Graph.Nodes {
		o := byName[n.Name]
		if o == nil || o.OpType != n.OpType || o.Domain != n.Domain || !sameInputs(o, n) {
			continue
		}
		if d := attrDiff(o, n, checked[n.Name]); d != "" {
			out = append(out, fmt.Sprintf("node %q (%s): %s", n.Name, n.OpType, d))
		}
	}
	for _, v := range rew.Graph.Inits {
		w := orig.Graph.Value(v.Name)
		if w == nil || w.Kind != graph.KindInit {
			continue
		}
		a, b := w.Const, v.Const
		same := a.DType == b.DType && slices.Equal(a.Dims, b.Dims)
		if same && ((!a.IsExternal() && !b.IsExternal()) || a.ByteSize() <= maxCompareBytes) {
			same = a.Equal(b)
		}
		if !same {
			out = append(out, fmt.Sprintf("initializer %q changed", v.Name))
		}
	}
	return out
}

func sameInputs(a, b *graph.Node) bool {
	if len(a.Inputs) != len(b.Inputs) {
		return false
	}
	for i := range a.Inputs {
		x, y := a.Inputs[i], b.Inputs[i]
		if (x == nil) != (y == nil) || (x != nil && x.Name != y.Name) {
			return false
		}
	}
	return true
}

// attrDiff names the first attribute that differs, or "" (graph
// attributes only when !graphsChecked).
func attrDiff(a, b *graph.Node, graphsChecked bool) string {
	for _, x := range a.Attrs {
		y := b.Attr(x.Name)
		if y == nil {
			return fmt.Sprintf("attribute %q removed", x.Name)
		}
		if !x.Equal(y) && !(graphsChecked && x.Kind == graph.AttrGraph) {
			return fmt.Sprintf("attribute %q changed", x.Name)
		}
	}
	for _, y := range b.Attrs {
		if a.Attr(y.Name) == nil {
			return fmt.Sprintf("attribute %q added", y.Name)
		}
	}
	return ""
}
