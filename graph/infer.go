package graph

// Shape and dtype inference with symbolic dims. It runs over the nodes in
// topological order and fills Value.Type, plus Value.Sym/Const for the small
// tensors of shape arithmetic so that dynamic Reshape targets and computed
// scales become known. Types declared in the file are kept where inference
// knows less.

type inferFunc func(c *ictx)

// ictx is what an inference rule sees of one node.
type ictx struct {
	g     *Graph
	n     *Node
	opset int64
}

func (c *ictx) in(i int) *Value { return c.n.Input(i) }

func (c *ictx) inType(i int) Type {
	if v := c.in(i); v != nil {
		return v.Type
	}
	return Type{}
}

// shape returns input i's shape and whether its rank is known.
func (c *ictx) shape(i int) (Shape, bool) {
	t := c.inType(i)
	return t.Shape, t.Ranked
}

func (c *ictx) out(i int) *Value { return c.n.Output(i) }

// set records the inferred type of output i, keeping declared knowledge
// where the inferred one has unknown dims.
func (c *ictx) set(i int, dt DType, s Shape, ranked bool) {
	v := c.out(i)
	if v == nil {
		return
	}
	inf := Type{DType: dt, Shape: s, Ranked: ranked}
	if !ranked {
		inf.Shape = nil
	}
	v.Type = mergeType(inf, v.Type)
}

func (c *ictx) setShape(i int, dt DType, s Shape) { c.set(i, dt, s, true) }

// same gives output 0 the type of input 0.
func (c *ictx) same() {
	t := c.inType(0)
	c.set(0, t.DType, append(Shape(nil), t.Shape...), t.Ranked)
}

// InferShapes (re)computes types and shape contents for every node.
func InferShapes(g *Graph) {
	order, err := g.TopoOrder()
	if err != nil {
		return
	}
	for _, n := range order {
		InferNode(g, n)
	}
}

// InferNode infers the outputs of one node from its inputs.
func InferNode(g *Graph, n *Node) {
	c := &ictx{g: g, n: n, opset: g.model.Opset("")}
	if CanonicalDomain(n.Domain) != "" {
		if f := customRules[n.Domain+"."+n.OpType]; f != nil {
			f(c)
		}
		return
	}
	if f := rules[n.OpType]; f != nil {
		f(c)
	} else if f := customRules["."+n.OpType]; f != nil {
		f(c)
	}
}

var rules map[string]inferFunc

// customRules infer ops of other domains, keyed "domain.Op".
var customRules = map[string]inferFunc{}

// RegisterInfer adds an inference rule for an op the built-in table lacks
// (fused attention ops; domain "" for the default domain). An op has one
// rule: registering a second panics at init, naming it, rather than
// silently replacing the first.
func RegisterInfer(domain, op string, f func(g *Graph, n *Node)) {
	key := CanonicalDomain(domain) + "." + op
	_, builtin := rules[op]
	if _, dup := customRules[key]; dup || (builtin && CanonicalDomain(domain) == "") {
		panic("graph.RegisterInfer: " + DomainName(domain) + "." + op + " already has a shape rule")
	}
	customRules[key] = func(c *ictx) { f(c.g, c.n) }
}

// SetType records an inferred output type, keeping declared knowledge.
func (v *Value) SetType(t Type) { v.Type = mergeType(t, v.Type) }

func init() {
	rules = map[string]inferFunc{
		"Constant": inferConstant, "Identity": inferSame, "Dropout": inferSame,
		"Cast": inferCast, "CastLike": inferCastLike, "Shape": inferShapeOp, "Size": inferSize,
		"Gather": inferGather, "Unsqueeze": inferUnsqueeze, "Squeeze": inferSqueeze,
		"Concat": inferConcat, "Slice": inferSlice, "Reshape": inferReshape,
		"Transpose": inferTranspose, "Flatten": inferFlatten, "Split": inferSplit,
		"Expand": inferExpand, "Where": inferWhere, "ConstantOfShape": inferConstantOfShape,
		"Range": inferRange, "Tile": inferTile, "EyeLike": inferEyeLike,
		"MatMul": inferMatMul, "Gemm": inferGemm, "Einsum": inferEinsum,
		"Conv": inferConv, "ConvTranspose": inferConvTranspose, "AveragePool": inferPool, "MaxPool": inferPool,
		"GlobalAveragePool": inferGlobalPool, "GlobalMaxPool": inferGlobalPool,
		"Resize": inferResize, "Upsample": inferResize,
		"LayerNormalization": inferLayerNorm, "RMSNormalization": inferSame, "RotaryEmbedding": inferSame,
		"ReduceMean": inferReduce, "ReduceSum": inferReduce, "ReduceProd": inferReduce,
		"ReduceMax": inferReduce, "ReduceMin": inferReduce, "ReduceL2": inferReduce,
		"ReduceSumSquare": inferReduce, "ArgMax": inferReduce, "ArgMin": inferReduce,
		"Pad": inferPad, "Trilu": inferSame, "CumSum": inferSame,
		"GatherElements": inferGatherElements, "GatherND": inferGatherND, "ScatterND": inferSame, "ScatterElements": inferSame,
		"TopK": inferTopK, "RandomUniformLike": inferRandomLike, "RandomNormalLike": inferRandomLike,
		"NonZero": func(c *ictx) {
			s, ok := c.shape(0)
			if ok {
				c.setShape(0, Int64, Shape{D(int64(len(s))), UnknownDim})
			}
		},
	}
	for _, op := range []string{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "PRelu", "Sum", "Mean", "BitShift"} {
		rules[op] = inferArith
	}
	for _, op := range []string{"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"} {
		rules[op] = inferCompare
	}
	for _, op := range []string{"Sqrt", "Reciprocal", "Neg", "Exp", "Log", "Abs", "Floor", "Ceil", "Round",
		"Sign", "Sin", "Cos", "Tanh", "Erf", "Relu", "Sigmoid", "Softplus", "Softsign", "Elu", "Selu",
		"LeakyRelu", "HardSigmoid", "HardSwish", "Gelu", "Mish", "Celu", "ThresholdedRelu", "Clip",
		"Softmax", "LogSoftmax", "Hardmax", "BatchNormalization", "InstanceNormalization",
		"GroupNormalization", "LpNormalization", "MeanVarianceNormalization"} {
		if rules[op] == nil {
			rules[op] = inferUnary
		}
	}
	rules["Not"] = inferSame
	rules["IsNaN"] = func(c *ictx) { s, r := c.shape(0); c.set(0, Bool, s, r) }
	rules["IsInf"] = rules["IsNaN"]
}

func inferSame(c *ictx) { c.same() }

// broadcast combines shapes numpy-style; ok is false when a rank is unknown.
func broadcast(shapes ...Shape) Shape {
	rank := 0
	for _, s := range shapes {
		if len(s) > rank {
			rank = len(s)
		}
	}
	out := make(Shape, rank)
	for i := range out {
		var d Dim
		set := false
		for _, s := range shapes {
			j := i - (rank - len(s))
			if j < 0 {
				continue
			}
			e := s[j]
			switch {
			case !set:
				d, set = e, true
			case e.Static() && e.C == 1:
			case d.Static() && d.C == 1:
				d = e
			case d.Unknown && !e.Unknown:
				d = e
			case e.Static() && !d.Static():
				d = e
			}
		}
		out[i] = d
	}
	return out
}

// Broadcast is broadcast for callers outside the package.
func Broadcast(shapes ...Shape) Shape { return broadcast(shapes...) }

func (c *ictx) inputsRanked(idx ...int) ([]Shape, bool) {
	var out []Shape
	for _, i := range idx {
		s, ok := c.shape(i)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func normAxis(a int64, rank int) (int, bool) {
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 || a >= int64(rank) {
		return 0, false
	}
	return int(a), true
}

// axesOf reads an axes list from an attribute (older opsets) or an input.
func (c *ictx) axesOf(attrUntil int64, inputIdx int) ([]int64, bool) {
	if c.opset < attrUntil {
		a := c.n.Attr("axes")
		if a == nil {
			return nil, false
		}
		return a.Ints, true
	}
	if a := c.n.Attr("axes"); a != nil {
		return a.Ints, true
	}
	v := c.in(inputIdx)
	if v == nil {
		return nil, false
	}
	xs, ok := v.Ints()
	return xs, ok
}
