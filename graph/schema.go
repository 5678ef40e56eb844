package graph

// Arity and attribute types of the ops attnopt reads (infer*.go, passes/,
// eval/), from the ONNX operator specs. Loading refuses a node of the
// default domain that breaks its entry (load_check.go), so no pass or rule
// indexes an input that is not there or reads an attribute of another type.
// Ops not listed get the generic checks only.

type opSchema struct {
	minIn, maxIn   int // maxIn < 0: variadic
	minOut, maxOut int
	// oldBefore/oldMinIn: before opset oldBefore the op took fewer inputs
	// (its operands were attributes then).
	oldBefore int64
	oldMinIn  int
	attrs     map[string]AttrKind
}

const variadic = -1

func op(minIn, maxIn, minOut, maxOut int, attrs ...any) *opSchema {
	s := &opSchema{minIn: minIn, maxIn: maxIn, minOut: minOut, maxOut: maxOut, attrs: map[string]AttrKind{}}
	for i := 0; i+1 < len(attrs); i += 2 {
		s.attrs[attrs[i].(string)] = attrs[i+1].(AttrKind)
	}
	return s
}

// before marks an op whose inputs were attributes before opset v.
func (s *opSchema) before(v int64, minIn int) *opSchema {
	s.oldBefore, s.oldMinIn = v, minIn
	return s
}

const (
	attrSparseTensor AttrKind = 11
	attrTypeProto    AttrKind = 13
)

var pool = []any{"auto_pad", AttrString, "ceil_mode", AttrInt, "count_include_pad", AttrInt, "dilations", AttrInts,
	"kernel_shape", AttrInts, "pads", AttrInts, "strides", AttrInts, "storage_order", AttrInt}

var reduce = []any{"axes", AttrInts, "keepdims", AttrInt, "noop_with_empty_axes", AttrInt}

var schemas = map[string]*opSchema{
	"Constant": op(0, 0, 1, 1, "value", AttrTensor, "value_float", AttrFloat, "value_floats", AttrFloats,
		"value_int", AttrInt, "value_ints", AttrInts, "value_string", AttrString, "value_strings", AttrStrings,
		"sparse_value", attrSparseTensor),
	"Identity":        op(1, 1, 1, 1),
	"Dropout":         op(1, 3, 1, 2, "ratio", AttrFloat, "seed", AttrInt, "is_test", AttrInt),
	"Cast":            op(1, 1, 1, 1, "to", AttrInt, "saturate", AttrInt, "round_mode", AttrString),
	"CastLike":        op(2, 2, 1, 1, "saturate", AttrInt, "round_mode", AttrString),
	"Shape":           op(1, 1, 1, 1, "start", AttrInt, "end", AttrInt),
	"Size":            op(1, 1, 1, 1),
	"Gather":          op(2, 2, 1, 1, "axis", AttrInt),
	"GatherElements":  op(2, 2, 1, 1, "axis", AttrInt),
	"Unsqueeze":       op(2, 2, 1, 1, "axes", AttrInts).before(13, 1),
	"Squeeze":         op(1, 2, 1, 1, "axes", AttrInts),
	"Concat":          op(1, variadic, 1, 1, "axis", AttrInt),
	"Slice":           op(3, 5, 1, 1, "starts", AttrInts, "ends", AttrInts, "axes", AttrInts).before(10, 1),
	"Reshape":         op(2, 2, 1, 1, "shape", AttrInts, "allowzero", AttrInt).before(5, 1),
	"Transpose":       op(1, 1, 1, 1, "perm", AttrInts),
	"Flatten":         op(1, 1, 1, 1, "axis", AttrInt),
	"Split":           op(1, 2, 1, variadic, "axis", AttrInt, "split", AttrInts, "num_outputs", AttrInt),
	"Expand":          op(2, 2, 1, 1),
	"Where":           op(3, 3, 1, 1),
	"ConstantOfShape": op(1, 1, 1, 1, "value", AttrTensor),
	"Range":           op(3, 3, 1, 1),
	"EyeLike":         op(1, 1, 1, 1, "dtype", AttrInt, "k", AttrInt),
	"Tile":            op(2, 3, 1, 1),
	"MatMul":          op(2, 2, 1, 1),
	"Gemm":            op(2, 3, 1, 1, "alpha", AttrFloat, "beta", AttrFloat, "transA", AttrInt, "transB", AttrInt),
	"Einsum":          op(1, variadic, 1, 1, "equation", AttrString),
	"Conv": op(2, 3, 1, 1, "auto_pad", AttrString, "dilations", AttrInts, "group", AttrInt,
		"kernel_shape", AttrInts, "pads", AttrInts, "strides", AttrInts),
	"AveragePool":       op(1, 1, 1, 1, pool...),
	"MaxPool":           op(1, 1, 1, 2, pool...),
	"GlobalAveragePool": op(1, 1, 1, 1),
	"GlobalMaxPool":     op(1, 1, 1, 1),
	"Resize": op(1, 4, 1, 1, "antialias", AttrInt, "axes", AttrInts, "coordinate_transformation_mode", AttrString,
		"cubic_coeff_a", AttrFloat, "exclude_outside", AttrInt, "extrapolation_value", AttrFloat,
		"keep_aspect_ratio_policy", AttrString, "mode", AttrString, "nearest_mode", AttrString),
	"Upsample":           op(1, 2, 1, 1, "mode", AttrString, "scales", AttrFloats),
	"LayerNormalization": op(2, 3, 1, 3, "axis", AttrInt, "epsilon", AttrFloat, "stash_type", AttrInt),
	"ReduceMean":         op(1, 2, 1, 1, reduce...),
	"ReduceSum":          op(1, 2, 1, 1, reduce...),
	"ReduceProd":         op(1, 2, 1, 1, reduce...),
	"ReduceMax":          op(1, 2, 1, 1, reduce...),
	"ReduceMin":          op(1, 2, 1, 1, reduce...),
	"ReduceL2":           op(1, 2, 1, 1, reduce...),
	"ReduceSumSquare":    op(1, 2, 1, 1, reduce...),
	"ReduceLogSumExp":    op(1, 2, 1, 1, reduce...),
	"ArgMax":             op(1, 1, 1, 1, "axis", AttrInt, "keepdims", AttrInt, "select_last_index", AttrInt),
	"ArgMin":             op(1, 1, 1, 1, "axis", AttrInt, "keepdims", AttrInt, "select_last_index", AttrInt),
	"Pad":                op(2, 4, 1, 1, "mode", AttrString, "pads", AttrInts, "value", AttrFloat).before(11, 1),
	"Trilu":              op(1, 2, 1, 1, "upper", AttrInt),
	"CumSum":             op(2, 2, 1, 1, "exclusive", AttrInt, "reverse", AttrInt),
	"ScatterND":          op(3, 3, 1, 1, "reduction", AttrString),
	"ScatterElements":    op(3, 3, 1, 1, "axis", AttrInt, "reduction", AttrString),
	"NonZero":            op(1, 1, 1, 1),
	"Softmax":            op(1, 1, 1, 1, "axis", AttrInt),
	"LogSoftmax":         op(1, 1, 1, 1, "axis", AttrInt),
	"Hardmax":            op(1, 1, 1, 1, "axis", AttrInt),
	"Clip":               op(1, 3, 1, 1, "min", AttrFloat, "max", AttrFloat),
	"IsNaN":              op(1, 1, 1, 1),
	"IsInf":              op(1, 1, 1, 1, "detect_negative", AttrInt, "detect_positive", AttrInt),
	"Not":                op(1, 1, 1, 1),
	"If":                 op(1, 1, 1, variadic, "then_branch", AttrGraph, "else_branch", AttrGraph),
	// Loop's M and cond, and Scan-8's sequence_lens, may be "" (omitted).
	"Loop": op(0, variadic, 1, variadic, "body", AttrGraph),
	"Scan": op(0, variadic, 1, variadic, "body", AttrGraph, "num_scan_inputs", AttrInt),
}

// requiredAttrs must be present (a missing one leaves nothing to run).
var requiredAttrs = map[string][]string{
	"Cast": {"to"}, "If": {"then_branch", "else_branch"}, "Loop": {"body"}, "Scan": {"body", "num_scan_inputs"},
	"Einsum": {"equation"},
}

func init() {
	for _, o := range []string{"Add", "Sub", "Mul", "Div", "Pow", "PRelu", "BitShift", "Equal", "Less",
		"Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"} {
		schemas[o] = op(2, 2, 1, 1, "broadcast", AttrInt, "axis", AttrInt, "direction", AttrString)
	}
	schemas["Mod"] = op(2, 2, 1, 1, "fmod", AttrInt)
	for _, o := range []string{"Sum", "Mean", "Max", "Min"} {
		schemas[o] = op(1, variadic, 1, 1)
	}
	for _, o := range []string{"Sqrt", "Reciprocal", "Neg", "Exp", "Log", "Abs", "Floor", "Ceil", "Round",
		"Sign", "Sin", "Cos", "Tanh", "Erf", "Relu", "Sigmoid", "Softplus", "Softsign"} {
		schemas[o] = op(1, 1, 1, 1)
	}
	for _, o := range []string{"Elu", "Celu", "LeakyRelu", "ThresholdedRelu"} {
		schemas[o] = op(1, 1, 1, 1, "alpha", AttrFloat)
	}
	schemas["Selu"] = op(1, 1, 1, 1, "alpha", AttrFloat, "gamma", AttrFloat)
	schemas["HardSigmoid"] = op(1, 1, 1, 1, "alpha", AttrFloat, "beta", AttrFloat)
	schemas["HardSwish"] = op(1, 1, 1, 1)
	schemas["Mish"] = op(1, 1, 1, 1)
	schemas["Gelu"] = op(1, 1, 1, 1, "approximate", AttrString)
	schemas["BatchNormalization"] = op(5, 5, 1, 5, "epsilon", AttrFloat, "momentum", AttrFloat, "training_mode", AttrInt)
	schemas["InstanceNormalization"] = op(3, 3, 1, 1, "epsilon", AttrFloat)
	schemas["GroupNormalization"] = op(3, 3, 1, 1, "epsilon", AttrFloat, "num_groups", AttrInt, "stash_type", AttrInt)
	schemas["LpNormalization"] = op(1, 1, 1, 1, "axis", AttrInt, "p", AttrInt)
	schemas["MeanVarianceNormalization"] = op(1, 1, 1, 1, "axes", AttrInts)
}
