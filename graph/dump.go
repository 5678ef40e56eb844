package graph

import (
	"fmt"
	"sort"
	"strings"
)

// Dump writes a deterministic text form of the graph for golden tests and
// for reading diffs: opsets, inputs, initializers (small integer contents
// shown), nodes in order with attributes and output types, outputs.
func (m *Model) Dump() string {
	var b strings.Builder
	g := m.Graph
	var ops []string
	for _, o := range m.Opsets {
		ops = append(ops, fmt.Sprintf("%s=%d", DomainName(o.Domain), o.Version))
	}
	sort.Strings(ops)
	fmt.Fprintf(&b, "opsets %s\n", strings.Join(ops, " "))
	for _, v := range g.Inputs {
		fmt.Fprintf(&b, "input %s: %s\n", v.Name, v.Type)
	}
	for _, v := range g.Inits {
		fmt.Fprintf(&b, "init %s: %s%s\n", v.Name, v.Type, initContent(v))
	}
	for _, n := range g.Nodes {
		var ins, outs []string
		for _, v := range n.Inputs {
			if v == nil {
				ins = append(ins, "_")
			} else {
				ins = append(ins, v.Name)
			}
		}
		for _, v := range n.Outputs {
			if v == nil {
				outs = append(outs, "_")
			} else {
				outs = append(outs, v.Name+": "+v.Type.String())
			}
		}
		op := n.OpType
		if n.Domain != "" {
			op = n.Domain + "." + op
		}
		fmt.Fprintf(&b, "%s = %s(%s)%s\n", strings.Join(outs, ", "), op, strings.Join(ins, ", "), attrText(n))
	}
	for _, v := range g.Outputs {
		fmt.Fprintf(&b, "output %s: %s\n", v.Name, v.Type)
	}
	return b.String()
}

func initContent(v *Value) string {
	if v.Const == nil || v.Const.Numel() > 16 {
		return ""
	}
	if f, err := v.Const.Float64s(); err == nil {
		parts := make([]string, len(f))
		for i, x := range f {
			parts[i] = fmt.Sprintf("%.6g", x)
		}
		return " = [" + strings.Join(parts, " ") + "]"
	}
	return ""
}

func attrText(n *Node) string {
	if len(n.Attrs) == 0 {
		return ""
	}
	var parts []string
	for _, a := range n.Attrs {
		var s string
		switch a.Kind {
		case AttrFloat:
			s = fmt.Sprintf("%.6g", a.F)
		case AttrInt:
			s = fmt.Sprint(a.I)
		case AttrString:
			s = fmt.Sprintf("%q", a.S)
		case AttrInts:
			s = fmt.Sprint(a.Ints)
		case AttrFloats:
			s = fmt.Sprint(a.Floats)
		case AttrTensor:
			if a.T != nil {
				s = fmt.Sprintf("tensor %s%v", a.T.DType, a.T.Dims)
			}
		default:
			s = fmt.Sprintf("<%d>", a.Kind)
		}
		parts = append(parts, a.Name+"="+s)
	}
	return " {" + strings.Join(parts, ", ") + "}"
}
