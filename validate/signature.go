package validate

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/attnopt/attnopt/graph"
)

// signature is a canonical form of how v is computed back to the values
// stop accepts: ops, domains, attributes and constants, with stopping
// values by name and every generated name ignored. Two files whose site
// signatures match compute the site the same way.
func signature(v *graph.Value, stop func(*graph.Value) bool) string {
	memo := map[*graph.Value]string{}
	var sig func(v *graph.Value) string
	sig = func(v *graph.Value) string {
		if v == nil {
			return "_"
		}
		if s, ok := memo[v]; ok {
			return s
		}
		memo[v] = "<cycle>"
		var s string
		switch {
		case stop(v):
			s = "in:" + v.Name
		case v.Kind == graph.KindInit:
			s = "const:" + tensorSig(v.Const)
		case v.Producer() == nil:
			s = "input:" + v.Name
		default:
			n := v.Producer()
			var b strings.Builder
			fmt.Fprintf(&b, "%s.%s{%s}(", n.Domain, n.OpType, attrsSig(n))
			for i, in := range n.Inputs {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(sig(in))
			}
			idx := 0
			for i, o := range n.Outputs {
				if o == v {
					idx = i
				}
			}
			fmt.Fprintf(&b, ")#%d", idx)
			s = b.String()
		}
		memo[v] = s
		return s
	}
	return sig(v)
}

func tensorSig(t *graph.Tensor) string {
	raw, err := t.Raw()
	if err != nil {
		return "unreadable"
	}
	return fmt.Sprintf("%s%v:%x", t.DType, t.Dims, sha256.Sum256(raw))
}

func attrsSig(n *graph.Node) string {
	parts := make([]string, 0, len(n.Attrs))
	for _, a := range n.Attrs {
		// %#v quotes strings and spells slices out, so values cannot
		// run together.
		v := fmt.Sprintf("kind %d", a.Kind)
		switch x := map[graph.AttrKind]any{graph.AttrFloat: a.F, graph.AttrInt: a.I, graph.AttrString: a.S,
			graph.AttrFloats: a.Floats, graph.AttrInts: a.Ints, graph.AttrStrings: a.Strings}[a.Kind]; {
		case a.Kind == graph.AttrTensor:
			v = tensorSig(a.T)
		case x != nil:
			v = fmt.Sprintf("%#v", x)
		}
		parts = append(parts, a.Name+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}
