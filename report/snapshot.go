package report

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/passes"
)

// Snapshot is what a comparison needs of one model, taken before anything
// mutates it (a rewrite changes its model in place). It copies names, types
// and attributes, and keeps pointers to initializer tensors, so taking one
// reads no tensor data.
type Snapshot struct {
	Path      string
	IRVersion int64
	Opsets    map[string]int64
	Inputs    []Signature
	Outputs   []Signature
	Nodes     []NodeRef
	Inits     []initRef
	Fused     []FusedInfo // already-fused attention ops
}

// Signature is a graph input or output: name, element type and shape.
// Shape entries are integers, symbol names, or "?" for unknown dims; a nil
// shape means the rank is unknown.
type Signature struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []any  `json:"shape"`
}

func (s Signature) String() string {
	if s.Shape == nil {
		return s.DType + "[*]"
	}
	parts := make([]string, len(s.Shape))
	for i, d := range s.Shape {
		parts[i] = fmt.Sprint(d)
	}
	return s.DType + "[" + strings.Join(parts, ",") + "]"
}

// NodeRef names one node: its label (name, or op→first output when
// unnamed), op type and domain ("" is ai.onnx).
type NodeRef struct {
	Name   string `json:"name"`
	Op     string `json:"op"`
	Domain string `json:"domain"`
	sig    uint64 // inputs, outputs and attributes, hashed
	// site and plan are what a rewrite recorded on a fused node
	// (passes.SiteOf, passes.RecordedPlan); site is -1 elsewhere.
	site int
	plan passes.PlanKind
}

// OpName is "Op" for ai.onnx and "domain.Op" otherwise.
func (n NodeRef) OpName() string {
	if n.Domain == "" {
		return n.Op
	}
	return n.Domain + "." + n.Op
}

type initRef struct {
	name   string
	dtype  string
	dims   []int64
	tensor *graph.Tensor
}

// TakeSnapshot records m under the display path. path should be what the
// user typed (or a base name), never an absolute temporary path in tests.
func TakeSnapshot(path string, m *graph.Model) *Snapshot {
	s := &Snapshot{Path: path, IRVersion: m.IRVersion, Opsets: map[string]int64{}}
	for _, o := range m.Opsets {
		s.Opsets[domainName(o.Domain)] = o.Version
	}
	g := m.Graph
	for _, v := range g.Inputs {
		s.Inputs = append(s.Inputs, signatureOf(v))
	}
	for _, v := range g.Outputs {
		s.Outputs = append(s.Outputs, signatureOf(v))
	}
	for _, n := range g.Nodes {
		ref := NodeRef{Name: n.Label(), Op: n.OpType, Domain: normDomain(n.Domain), sig: nodeSig(n), site: -1}
		if id, ok := passes.SiteOf(n); ok {
			ref.site = id
			ref.plan, _, _, _ = passes.RecordedPlan(n)
			ref.plan = believedPlan(n, ref.plan)
		}
		s.Nodes = append(s.Nodes, ref)
	}
	for _, v := range g.Inits {
		r := initRef{name: v.Name, dtype: v.Type.DType.String(), tensor: v.Const}
		if v.Const != nil {
			r.dims = append([]int64(nil), v.Const.Dims...)
			r.dtype = v.Const.DType.String()
		}
		s.Inits = append(s.Inits, r)
	}
	s.Fused = fusedOf(g)
	return s
}

func domainName(d string) string { return graph.DomainName(d) }

func normDomain(d string) string { return graph.CanonicalDomain(d) }

func signatureOf(v *graph.Value) Signature {
	s := Signature{Name: v.Name, DType: v.Type.DType.String()}
	if v.Type.Ranked {
		s.Shape = []any{}
		for _, d := range v.Type.Shape {
			switch x, ok := d.Value(); {
			case ok:
				s.Shape = append(s.Shape, x)
			case d.Unknown:
				s.Shape = append(s.Shape, "?")
			default:
				s.Shape = append(s.Shape, d.String())
			}
		}
	}
	return s
}

// nodeSig hashes what a node computes from what: its input and output
// names and its attributes. Tensor attributes are hashed by type, dims and
// (up to 1 MiB) content; graph attributes by name only.
func nodeSig(n *graph.Node) uint64 {
	h := fnv.New64a()
	w := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
	}
	for _, v := range n.Inputs {
		if v == nil {
			w("_")
		} else {
			w(v.Name)
		}
	}
	w("→")
	for _, v := range n.Outputs {
		if v == nil {
			w("_")
		} else {
			w(v.Name)
		}
	}
	for _, a := range n.Attrs {
		w(a.Name, fmt.Sprint(a.Kind))
		switch a.Kind {
		case graph.AttrFloat:
			w(fmt.Sprint(math.Float32bits(a.F)))
		case graph.AttrInt:
			w(fmt.Sprint(a.I))
		case graph.AttrString:
			w(a.S)
		case graph.AttrFloats:
			w(fmt.Sprint(a.Floats))
		case graph.AttrInts:
			w(fmt.Sprint(a.Ints))
		case graph.AttrStrings:
			w(a.Strings...)
		case graph.AttrTensor:
			if a.T != nil {
				w(a.T.DType.String(), fmt.Sprint(a.T.Dims))
				if !a.T.IsExternal() && a.T.ByteSize() <= 1<<20 {
					if raw, err := a.T.Raw(); err == nil {
						h.Write(raw)
					}
				}
			}
		}
	}
	return h.Sum64()
}

// fusedOf lists the graph's already-fused attention ops, in graph order.
func fusedOf(g *graph.Graph) []FusedInfo {
	out := []FusedInfo{}
	for _, n := range g.Nodes {
		if passes.IsFusedAttention(n) {
			fi := FusedInfo{Op: n.OpType, Domain: n.Domain, Node: n.Label()}
			if o := n.Output(0); o != nil {
				fi.Output = o.Name
			}
			out = append(out, fi)
		}
	}
	return out
}

// opCounts counts nodes by "domain.Op".
func (s *Snapshot) opCounts() map[string]int {
	c := map[string]int{}
	for _, n := range s.Nodes {
		c[n.OpName()]++
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// believedPlan is the recorded plan when the node's ops bear it out (as
// validate/approx_plan.go requires): a window plan on a WindowAttention, a
// pool plan on an op fed by an AveragePool; else exact.
func believedPlan(n *graph.Node, recorded passes.PlanKind) passes.PlanKind {
	switch recorded {
	case passes.PlanWindow:
		if n.OpType == "WindowAttention" && n.Domain == "attnopt" {
			return recorded
		}
	case passes.PlanPoolKV, passes.PlanPoolQKV:
		if fedByPool(n) {
			return recorded
		}
	default:
		return recorded
	}
	return passes.PlanExact
}

// fedByPool: an AveragePool lies a few nodes up one of n's inputs (the
// pooled tokens reach the fused op through a Reshape and a Transpose).
func fedByPool(n *graph.Node) bool {
	seen := map[*graph.Node]bool{}
	var up func(n *graph.Node, depth int) bool
	up = func(n *graph.Node, depth int) bool {
		if n == nil || seen[n] || depth > 8 {
			return false
		}
		seen[n] = true
		if n.Is("AveragePool") {
			return true
		}
		for _, v := range n.Inputs {
			if v != nil && up(v.Producer(), depth+1) {
				return true
			}
		}
		return false
	}
	for _, v := range n.Inputs {
		if v != nil && up(v.Producer(), 0) {
			return true
		}
	}
	return false
}
