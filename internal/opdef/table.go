package opdef

import "github.com/attnopt/attnopt/graph"

// Op is one fused op: its inputs, attributes and semantics, as the Go
// schema, the Go runtime, the kernels' C ABI and ONNX Runtime library, the
// ctypes mirror and docs/ops.md all state it (the last four generated from
// it, see doc.go).
type Op struct {
	Name   string // op_type, in Domain
	Inputs []Input
	Output string // its shape and type, for docs
	Attrs  []Attr
	// Base is a smallest valid attribute set over Q, K, V (1, 1, 4, 4):
	// the conformance cases (cases.go) vary one attribute of it at a time.
	Base []*graph.Attr
	// Semantics are the op's paragraphs in docs/ops.md.
	Semantics []string
	// Code names the files that implement it (docs/ops.md).
	Code []string
}

// Input is one operand of an op.
type Input struct {
	Name     string
	Optional bool
	Types    []graph.DType
	MinRank  int
	MaxRank  int
	Doc      string
}

// FloatRule is the range of a FLOAT attribute.
type FloatRule int

const (
	// AnyFloat: every float value.
	AnyFloat FloatRule = iota
	// FinitePositive: finite and > 0 (a scale).
	FinitePositive
	// FiniteOrNegInf: finite or −inf, never NaN or +inf (a fill added to a
	// dropped key's score).
	FiniteOrNegInf
	// FiniteNonNegative: finite and >= 0 (a bound that 0 turns off).
	FiniteNonNegative
	// NonPositiveOrNegInf: −inf or finite and <= 0 (a floor on additive
	// mask values that −inf turns off).
	NonPositiveOrNegInf
)

// Named is one value of an INT attribute with a closed set of values.
type Named struct {
	V    int64
	Name string // the C and Python constant's suffix ("" for a plain flag)
	Doc  string
}

// Need says that an attribute whose value is not its default needs Attr to
// hold Value (sliding_window > 0 needs causal = 1).
type Need struct {
	Attr  string
	Value int64
}

// Len bounds an INTS attribute's entry count: Min..Max, or as many as the
// attribute Like (then Min and Max are Like's).
type Len struct {
	Min, Max int
	Like     string
}

// NoBound marks an INT range side without a limit.
const (
	NoLo = int64(-1 << 63)
	NoHi = int64(1<<63 - 1)
)

// Attr is one attribute: its ONNX type, default, range and meaning.
type Attr struct {
	Name     string
	Kind     graph.AttrKind // AttrInt, AttrFloat or AttrInts
	Required bool
	// Int and Float are the default of an absent INT or FLOAT attribute;
	// Computed, when set, says what the kernels compute instead (scale:
	// 1/sqrt(Dqk); shift: zeros).
	Int      int64
	Float    float32
	Computed string
	// Lo and Hi bound an INT value and each INTS entry (NoLo, NoHi: none);
	// Values, when set, are the only values (Lo and Hi are theirs).
	Lo, Hi int64
	Values []Named
	Rule   FloatRule
	Needs  *Need
	Len    Len
	// Always: a rewrite writes it even at its default (a Required one
	// always is). Written says when a rewrite writes any other.
	Always bool
	// Doc is the meaning.
	Doc     string
	Written string
}

// WrittenText says when a rewrite writes the attribute, for docs.
func (a *Attr) WrittenText() string {
	if a.Always || a.Required {
		return "always"
	}
	return a.Written
}

// Attr returns the named attribute of op, or nil.
func (op *Op) Attr(name string) *Attr {
	for i := range op.Attrs {
		if op.Attrs[i].Name == name {
			return &op.Attrs[i]
		}
	}
	return nil
}

// Index is the position of the named attribute in op.Attrs, -1 when none.
func (op *Op) Index(name string) int {
	for i := range op.Attrs {
		if op.Attrs[i].Name == name {
			return i
		}
	}
	return -1
}

// FullName is "attnopt.Name".
func (op *Op) FullName() string { return Domain + "." + op.Name }

// Ops are the fused ops, in the order the generated files list them.
func Ops() []*Op { return []*Op{FlashAttention, WindowAttention} }

// Lookup returns the op named "domain.Name" or (domain, name), nil if none.
func Lookup(domain, name string) *Op {
	if domain != Domain {
		return nil
	}
	for _, op := range Ops() {
		if op.Name == name {
			return op
		}
	}
	return nil
}
