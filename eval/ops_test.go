package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
)

type opCase struct {
	name  string
	op    string
	opset int64
	at    attrs
	in    []*Tensor
	want  []*Tensor
	err   string // non-empty: the run must fail with this text
}

func runCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, c := range cases {
		name := c.op + "/" + c.name
		t.Run(name, func(t *testing.T) {
			opset := c.opset
			if opset == 0 {
				opset = 17
			}
			got, err := runOp(c.op, "", opset, c.at, c.in, max(len(c.want), 1))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("want error containing %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want {
				if d := diff(got[i], w, 1e-5, 1e-5); d != "" {
					t.Errorf("output %d: %s (got %v %v%v)", i, d, got[i].Shape, got[i].F, got[i].I)
				}
			}
		})
	}
}

func s(n ...int) []int { return n }

var nan = float32(math.NaN())
var inf = float32(math.Inf(1))

func TestElementwiseOps(t *testing.T) {
	x := f32(s(4), -2, -0.5, 0, 1.5)
	one := func(op string, want ...float32) opCase {
		return opCase{name: "basic", op: op, in: []*Tensor{x}, want: []*Tensor{f32(s(4), want...)}}
	}
	runCases(t, []opCase{
		{name: "basic", op: "Sqrt", in: []*Tensor{f32(s(3), 0, 4, 2.25)}, want: []*Tensor{f32(s(3), 0, 2, 1.5)}},
		{name: "basic", op: "Reciprocal", in: []*Tensor{f32(s(2), 4, -0.5)}, want: []*Tensor{f32(s(2), 0.25, -2)}},
		one("Neg", 2, 0.5, 0, -1.5),
		one("Abs", 2, 0.5, 0, 1.5),
		one("Floor", -2, -1, 0, 1),
		one("Ceil", -2, 0, 0, 2),
		{name: "half_to_even", op: "Round", in: []*Tensor{f32(s(4), 0.5, 1.5, 2.5, -2.5)}, want: []*Tensor{f32(s(4), 0, 2, 2, -2)}},
		one("Sign", -1, -1, 0, 1),
		one("Relu", 0, 0, 0, 1.5),
		{name: "int", op: "Abs", in: []*Tensor{i64s(s(2), -3, 4)}, want: []*Tensor{i64s(s(2), 3, 4)}},
		{name: "basic", op: "Exp", in: []*Tensor{f32(s(2), 0, 1)}, want: []*Tensor{f32(s(2), 1, float32(math.E))}},
		{name: "basic", op: "Log", in: []*Tensor{f32(s(2), 1, float32(math.E))}, want: []*Tensor{f32(s(2), 0, 1)}},
		{name: "basic", op: "Sin", in: []*Tensor{f32(s(2), 0, math.Pi/2)}, want: []*Tensor{f32(s(2), 0, 1)}},
		{name: "basic", op: "Cos", in: []*Tensor{f32(s(2), 0, math.Pi)}, want: []*Tensor{f32(s(2), 1, -1)}},
		{name: "basic", op: "Tanh", in: []*Tensor{f32(s(2), 0, 0.5)}, want: []*Tensor{f32(s(2), 0, 0.46211716)}},
		{name: "basic", op: "Erf", in: []*Tensor{f32(s(2), 0, 1)}, want: []*Tensor{f32(s(2), 0, 0.84270079)}},
		{name: "basic", op: "Sigmoid", in: []*Tensor{f32(s(3), 0, 2, -100)}, want: []*Tensor{f32(s(3), 0.5, 0.88079708, 0)}},
		{name: "basic", op: "Softplus", in: []*Tensor{f32(s(2), 0, 100)}, want: []*Tensor{f32(s(2), float32(math.Ln2), 100)}},
		{name: "alpha", op: "Elu", at: attrs{"alpha": 2.0}, in: []*Tensor{f32(s(2), -1, 3)}, want: []*Tensor{f32(s(2), 2*(float32(math.Exp(-1))-1), 3)}},
		{name: "alpha", op: "LeakyRelu", at: attrs{"alpha": 0.1}, in: []*Tensor{f32(s(2), -2, 3)}, want: []*Tensor{f32(s(2), -0.2, 3)}},
		{name: "default", op: "HardSigmoid", in: []*Tensor{f32(s(3), -5, 0, 1)}, want: []*Tensor{f32(s(3), 0, 0.5, 0.7)}},
		{name: "basic", op: "HardSwish", in: []*Tensor{f32(s(3), -4, 1, 4)}, want: []*Tensor{f32(s(3), 0, 1*(1.0/6+0.5), 4)}},
		{name: "erf", op: "Gelu", opset: 20, in: []*Tensor{f32(s(2), 1, -1)}, want: []*Tensor{f32(s(2), 0.84134475, -0.15865525)}},
		{name: "tanh", op: "Gelu", opset: 20, at: attrs{"approximate": "tanh"}, in: []*Tensor{f32(s(1), 1)}, want: []*Tensor{f32(s(1), 0.84119199)}},
		{name: "basic", op: "Mish", opset: 18, in: []*Tensor{f32(s(2), 0, 1)}, want: []*Tensor{f32(s(2), 0, 0.86509839)}},
		{name: "attrs_opset6", op: "Clip", opset: 6, at: attrs{"min": -1.0, "max": 1.0}, in: []*Tensor{x}, want: []*Tensor{f32(s(4), -1, -0.5, 0, 1)}},
		{name: "inputs_opset13", op: "Clip", opset: 13, in: []*Tensor{x, f32(nil, 0), nil}, want: []*Tensor{f32(s(4), 0, 0, 0, 1.5)}},
		{name: "int", op: "Clip", opset: 13, in: []*Tensor{i64s(s(3), -5, 2, 9), i64s(nil, 0), i64s(nil, 4)}, want: []*Tensor{i64s(s(3), 0, 2, 4)}},
		{name: "basic", op: "Not", in: []*Tensor{bools(s(2), true, false)}, want: []*Tensor{bools(s(2), false, true)}},
		{name: "basic", op: "IsNaN", in: []*Tensor{f32(s(3), 1, nan, inf)}, want: []*Tensor{bools(s(3), false, true, false)}},
		{name: "neg_only", op: "IsInf", at: attrs{"detect_positive": 0}, in: []*Tensor{f32(s(3), -inf, nan, inf)}, want: []*Tensor{bools(s(3), true, false, false)}},
	})
}

func TestBinaryOps(t *testing.T) {
	a := f32(s(2, 3), 1, 2, 3, 4, 5, 6)
	row := f32(s(3), 10, 20, 30)
	col := f32(s(2, 1), 2, 4)
	runCases(t, []opCase{
		{name: "row_broadcast", op: "Add", in: []*Tensor{a, row}, want: []*Tensor{f32(s(2, 3), 11, 22, 33, 14, 25, 36)}},
		{name: "col_broadcast", op: "Sub", in: []*Tensor{a, col}, want: []*Tensor{f32(s(2, 3), -1, 0, 1, 0, 1, 2)}},
		{name: "outer", op: "Mul", in: []*Tensor{col, row}, want: []*Tensor{f32(s(2, 3), 20, 40, 60, 40, 80, 120)}},
		{name: "scalar", op: "Div", in: []*Tensor{a, f32(nil, 2)}, want: []*Tensor{f32(s(2, 3), 0.5, 1, 1.5, 2, 2.5, 3)}},
		{name: "int_truncates", op: "Div", in: []*Tensor{i64s(s(2), 7, -7), i64s(s(1), 2)}, want: []*Tensor{i64s(s(2), 3, -3)}},
		{name: "int_by_zero", op: "Div", in: []*Tensor{i64s(s(1), 1), i64s(s(1), 0)}, err: "division by zero"},
		{name: "float_int_exp", op: "Pow", in: []*Tensor{f32(s(2), 2, 3), i64s(nil, 2)}, want: []*Tensor{f32(s(2), 4, 9)}},
		{name: "variadic", op: "Max", in: []*Tensor{f32(s(2), 1, 5), f32(s(1), 3), f32(s(2), 0, 7)}, want: []*Tensor{f32(s(2), 3, 7)}},
		{name: "nan", op: "Min", in: []*Tensor{f32(s(2), 1, nan), f32(s(2), 0, 2)}, want: []*Tensor{f32(s(2), 0, nan)}},
		{name: "int_floor", op: "Mod", in: []*Tensor{i64s(s(2), -7, 7), i64s(s(1), 3)}, want: []*Tensor{i64s(s(2), 2, 1)}},
		{name: "fmod", op: "Mod", at: attrs{"fmod": 1}, in: []*Tensor{f32(s(2), -7, 7.5), f32(s(1), 3)}, want: []*Tensor{f32(s(2), -1, 1.5)}},
		{name: "basic", op: "Equal", in: []*Tensor{i64s(s(3), 1, 2, 3), i64s(s(1), 2)}, want: []*Tensor{bools(s(3), false, true, false)}},
		{name: "basic", op: "Less", in: []*Tensor{a, f32(nil, 3)}, want: []*Tensor{bools(s(2, 3), true, true, false, false, false, false)}},
		{name: "basic", op: "Greater", in: []*Tensor{f32(s(2), 1, 5), f32(s(2), 2, 2)}, want: []*Tensor{bools(s(2), false, true)}},
		{name: "basic", op: "LessOrEqual", in: []*Tensor{f32(s(2), 2, 5), f32(s(2), 2, 2)}, want: []*Tensor{bools(s(2), true, false)}},
		{name: "basic", op: "GreaterOrEqual", in: []*Tensor{f32(s(2), 2, 1), f32(s(2), 2, 2)}, want: []*Tensor{bools(s(2), true, false)}},
		{name: "broadcast", op: "And", in: []*Tensor{bools(s(2, 1), true, false), bools(s(2), true, false)}, want: []*Tensor{bools(s(2, 2), true, false, false, false)}},
		{name: "basic", op: "Or", in: []*Tensor{bools(s(2), true, false), bools(s(2), false, false)}, want: []*Tensor{bools(s(2), true, false)}},
		{name: "basic", op: "Xor", in: []*Tensor{bools(s(2), true, true), bools(s(2), false, true)}, want: []*Tensor{bools(s(2), true, false)}},
		{name: "channel_slope", op: "PRelu", in: []*Tensor{f32(s(1, 2, 2), -1, 2, -3, 4), f32(s(2, 1), 0.5, 0.1)}, want: []*Tensor{f32(s(1, 2, 2), -0.5, 2, -0.3, 4)}},
		{name: "three", op: "Sum", in: []*Tensor{f32(s(2), 1, 2), f32(s(1), 10), f32(s(2), 100, 200)}, want: []*Tensor{f32(s(2), 111, 212)}},
		{name: "two", op: "Mean", in: []*Tensor{f32(s(2), 1, 2), f32(s(2), 3, 6)}, want: []*Tensor{f32(s(2), 2, 4)}},
		{name: "bad_broadcast", op: "Add", in: []*Tensor{a, f32(s(2), 1, 2)}, err: "broadcast"},
	})
}

func TestShapeOps(t *testing.T) {
	a := f32(s(2, 3), 1, 2, 3, 4, 5, 6)
	runCases(t, []opCase{
		{name: "zero_and_minus1", op: "Reshape", in: []*Tensor{a, i64s(s(3), 0, -1, 1)}, want: []*Tensor{f32(s(2, 3, 1), 1, 2, 3, 4, 5, 6)}},
		{name: "allowzero", op: "Reshape", opset: 14, at: attrs{"allowzero": 1}, in: []*Tensor{f32(s(0, 3)), i64s(s(2), 3, 0)}, want: []*Tensor{f32(s(3, 0))}},
		{name: "bad", op: "Reshape", in: []*Tensor{a, i64s(s(1), 4)}, err: "reshape"},
		{name: "perm", op: "Transpose", at: attrs{"perm": []int64{1, 0}}, in: []*Tensor{a}, want: []*Tensor{f32(s(3, 2), 1, 4, 2, 5, 3, 6)}},
		{name: "default_reverses", op: "Transpose", in: []*Tensor{f32(s(1, 2, 3), 1, 2, 3, 4, 5, 6)}, want: []*Tensor{f32(s(3, 2, 1), 1, 4, 2, 5, 3, 6)}},
		{name: "attr_opset11", op: "Squeeze", opset: 11, at: attrs{"axes": []int64{-1}}, in: []*Tensor{f32(s(1, 2, 1), 1, 2)}, want: []*Tensor{f32(s(1, 2), 1, 2)}},
		{name: "input_opset13", op: "Squeeze", opset: 13, in: []*Tensor{f32(s(1, 2, 1), 1, 2), i64s(s(1), 0)}, want: []*Tensor{f32(s(2, 1), 1, 2)}},
		{name: "all", op: "Squeeze", opset: 13, in: []*Tensor{f32(s(1, 2, 1), 1, 2)}, want: []*Tensor{f32(s(2), 1, 2)}},
		{name: "attr_opset11", op: "Unsqueeze", opset: 11, at: attrs{"axes": []int64{0, 3}}, in: []*Tensor{a}, want: []*Tensor{f32(s(1, 2, 3, 1), 1, 2, 3, 4, 5, 6)}},
		{name: "input_opset13", op: "Unsqueeze", opset: 13, in: []*Tensor{a, i64s(s(1), -1)}, want: []*Tensor{f32(s(2, 3, 1), 1, 2, 3, 4, 5, 6)}},
		{name: "axis1", op: "Concat", at: attrs{"axis": 1}, in: []*Tensor{a, f32(s(2, 1), 7, 8)}, want: []*Tensor{f32(s(2, 4), 1, 2, 3, 7, 4, 5, 6, 8)}},
		{name: "int_axis0", op: "Concat", at: attrs{"axis": 0}, in: []*Tensor{i64s(s(1), 1), i64s(s(2), 2, 3)}, want: []*Tensor{i64s(s(3), 1, 2, 3)}},
		{name: "attr_opset11", op: "Split", opset: 11, at: attrs{"axis": 1, "split": []int64{1, 2}}, in: []*Tensor{a}, want: []*Tensor{f32(s(2, 1), 1, 4), f32(s(2, 2), 2, 3, 5, 6)}},
		{name: "input_opset13", op: "Split", opset: 13, at: attrs{"axis": 1}, in: []*Tensor{a, i64s(s(2), 2, 1)}, want: []*Tensor{f32(s(2, 2), 1, 2, 4, 5), f32(s(2, 1), 3, 6)}},
		{name: "equal_parts", op: "Split", opset: 13, at: attrs{"axis": 0}, in: []*Tensor{a}, want: []*Tensor{f32(s(1, 3), 1, 2, 3), f32(s(1, 3), 4, 5, 6)}},
		{name: "num_outputs_opset18", op: "Split", opset: 18, at: attrs{"axis": 1, "num_outputs": 2}, in: []*Tensor{a}, want: []*Tensor{f32(s(2, 2), 1, 2, 4, 5), f32(s(2, 1), 3, 6)}},
		{name: "attrs_opset9", op: "Slice", opset: 9, at: attrs{"starts": []int64{1}, "ends": []int64{1000}, "axes": []int64{1}}, in: []*Tensor{a}, want: []*Tensor{f32(s(2, 2), 2, 3, 5, 6)}},
		{name: "negative_step", op: "Slice", opset: 13, in: []*Tensor{a, i64s(s(1), -1), i64s(s(1), math.MinInt64), i64s(s(1), 1), i64s(s(1), -2)}, want: []*Tensor{f32(s(2, 2), 3, 1, 6, 4)}},
		{name: "clamped", op: "Slice", opset: 13, in: []*Tensor{a, i64s(s(2), -5, 1), i64s(s(2), 5, 2)}, want: []*Tensor{f32(s(2, 1), 2, 5)}},
		{name: "negative_index", op: "Gather", at: attrs{"axis": 1}, in: []*Tensor{a, i64s(s(2), -1, 0)}, want: []*Tensor{f32(s(2, 2), 3, 1, 6, 4)}},
		{name: "scalar_index", op: "Gather", in: []*Tensor{a, i64s(nil, 1)}, want: []*Tensor{f32(s(3), 4, 5, 6)}},
		{name: "out_of_range", op: "Gather", in: []*Tensor{a, i64s(nil, 2)}, err: "out of range"},
		{name: "axis1", op: "GatherElements", at: attrs{"axis": 1}, in: []*Tensor{a, i64s(s(2, 2), 2, 0, 1, 1)}, want: []*Tensor{f32(s(2, 2), 3, 1, 5, 5)}},
		{name: "batch0", op: "GatherND", opset: 13, in: []*Tensor{a, i64s(s(2, 2), 0, 2, 1, 0)}, want: []*Tensor{f32(s(2), 3, 4)}},
		{name: "batch1", op: "GatherND", opset: 13, at: attrs{"batch_dims": 1}, in: []*Tensor{a, i64s(s(2, 1), 2, 0)}, want: []*Tensor{f32(s(2), 3, 4)}},
		{name: "broadcast", op: "Expand", in: []*Tensor{f32(s(2, 1), 1, 2), i64s(s(3), 2, 1, 3)}, want: []*Tensor{f32(s(2, 2, 3), 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2)}},
		{name: "broadcast", op: "Where", in: []*Tensor{bools(s(2, 1), true, false), a, f32(nil, 0)}, want: []*Tensor{f32(s(2, 3), 1, 2, 3, 0, 0, 0)}},
		{name: "value", op: "ConstantOfShape", at: attrs{"value": i64s(s(1), 7)}, in: []*Tensor{i64s(s(2), 2, 1)}, want: []*Tensor{i64s(s(2, 1), 7, 7)}},
		{name: "default", op: "ConstantOfShape", in: []*Tensor{i64s(s(1), 2)}, want: []*Tensor{f32(s(2), 0, 0)}},
		{name: "int", op: "Range", in: []*Tensor{i64s(nil, 1), i64s(nil, 8), i64s(nil, 3)}, want: []*Tensor{i64s(s(3), 1, 4, 7)}},
		{name: "float_down", op: "Range", in: []*Tensor{f32(nil, 1), f32(nil, 0), f32(nil, -0.25)}, want: []*Tensor{f32(s(4), 1, 0.75, 0.5, 0.25)}},
		{name: "basic", op: "Tile", in: []*Tensor{f32(s(1, 2), 1, 2), i64s(s(2), 2, 2)}, want: []*Tensor{f32(s(2, 4), 1, 2, 1, 2, 1, 2, 1, 2)}},
		{name: "constant", op: "Pad", opset: 13, in: []*Tensor{f32(s(1, 2), 1, 2), i64s(s(4), 0, 1, 1, 0), f32(nil, 9)}, want: []*Tensor{f32(s(2, 3), 9, 1, 2, 9, 9, 9)}},
		{name: "reflect", op: "Pad", opset: 13, at: attrs{"mode": "reflect"}, in: []*Tensor{f32(s(3), 1, 2, 3), i64s(s(2), 2, 2)}, want: []*Tensor{f32(s(7), 3, 2, 1, 2, 3, 2, 1)}},
		{name: "edge", op: "Pad", opset: 13, at: attrs{"mode": "edge"}, in: []*Tensor{f32(s(2), 1, 2), i64s(s(2), 1, 2)}, want: []*Tensor{f32(s(5), 1, 1, 2, 2, 2)}},
		{name: "attrs_opset2", op: "Pad", opset: 2, at: attrs{"pads": []int64{1, 0}, "value": 5.0}, in: []*Tensor{f32(s(1), 1)}, want: []*Tensor{f32(s(2), 5, 1)}},
		{name: "axes_opset18", op: "Pad", opset: 18, in: []*Tensor{a, i64s(s(2), 1, 0), nil, i64s(s(1), 1)}, want: []*Tensor{f32(s(2, 4), 0, 1, 2, 3, 0, 4, 5, 6)}},
		{name: "upper_k1", op: "Trilu", opset: 14, in: []*Tensor{f32(s(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), i64s(nil, 1)}, want: []*Tensor{f32(s(3, 3), 0, 2, 3, 0, 0, 6, 0, 0, 0)}},
		{name: "lower", op: "Trilu", opset: 14, at: attrs{"upper": 0}, in: []*Tensor{f32(s(2, 3), 1, 2, 3, 4, 5, 6)}, want: []*Tensor{f32(s(2, 3), 1, 0, 0, 4, 5, 0)}},
		{name: "axis1", op: "CumSum", in: []*Tensor{a, i64s(nil, 1)}, want: []*Tensor{f32(s(2, 3), 1, 3, 6, 4, 9, 15)}},
		{name: "exclusive_reverse", op: "CumSum", at: attrs{"exclusive": 1, "reverse": 1}, in: []*Tensor{i64s(s(3), 1, 2, 3), i64s(nil, 0)}, want: []*Tensor{i64s(s(3), 5, 3, 0)}},
		{name: "start_end", op: "Shape", opset: 15, at: attrs{"start": 1, "end": -1}, in: []*Tensor{NewTensor(graph.Float32, s(2, 3, 4, 5))}, want: []*Tensor{i64s(s(2), 3, 4)}},
		{name: "basic", op: "Size", in: []*Tensor{a}, want: []*Tensor{i64s(nil, 6)}},
		{name: "axis2", op: "Flatten", at: attrs{"axis": 2}, in: []*Tensor{f32(s(1, 2, 2), 1, 2, 3, 4)}, want: []*Tensor{f32(s(2, 2), 1, 2, 3, 4)}},
		{name: "float_to_int_truncates", op: "Cast", at: attrs{"to": int(graph.Int32)}, in: []*Tensor{f32(s(3), 1.7, -1.7, 0)}, want: []*Tensor{{DType: graph.Int32, Shape: s(3), I: []int64{1, -1, 0}}}},
		{name: "to_bool", op: "Cast", at: attrs{"to": int(graph.Bool)}, in: []*Tensor{i64s(s(2), 0, 3)}, want: []*Tensor{bools(s(2), false, true)}},
		{name: "to_fp16_rounds", op: "Cast", at: attrs{"to": int(graph.Float16)}, in: []*Tensor{f32(s(1), 1.0001)}, want: []*Tensor{{DType: graph.Float16, Shape: s(1), F: []float32{1}}}},
		{name: "like", op: "CastLike", opset: 15, in: []*Tensor{i64s(s(1), 3), f32(nil, 0)}, want: []*Tensor{f32(s(1), 3)}},
		{name: "passes", op: "Identity", in: []*Tensor{a}, want: []*Tensor{a}},
		{name: "inference", op: "Dropout", opset: 13, in: []*Tensor{a}, want: []*Tensor{a}},
		{name: "rows", op: "ScatterND", opset: 16, in: []*Tensor{a, i64s(s(1, 1), 1), f32(s(1, 3), 7, 8, 9)}, want: []*Tensor{f32(s(2, 3), 1, 2, 3, 7, 8, 9)}},
		{name: "add", op: "ScatterND", opset: 16, at: attrs{"reduction": "add"}, in: []*Tensor{a, i64s(s(2, 2), 0, 0, 0, 0), f32(s(2), 1, 1)}, want: []*Tensor{f32(s(2, 3), 3, 2, 3, 4, 5, 6)}},
		{name: "basic", op: "NonZero", in: []*Tensor{f32(s(2, 2), 1, 0, 0, 3)}, want: []*Tensor{i64s(s(2, 2), 0, 1, 0, 1)}},
	})
}

func TestNNOps(t *testing.T) {
	a := f32(s(2, 3), 1, 2, 3, 4, 5, 6)
	sm := func(x ...float64) []float32 {
		sum := 0.0
		for _, v := range x {
			sum += math.Exp(v)
		}
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(math.Exp(v) / sum)
		}
		return out
	}
	runCases(t, []opCase{
		{name: "2d", op: "MatMul", in: []*Tensor{a, f32(s(3, 1), 1, 0, -1)}, want: []*Tensor{f32(s(2, 1), -2, -2)}},
		{name: "batch_broadcast", op: "MatMul", in: []*Tensor{f32(s(2, 1, 2), 1, 2, 3, 4), f32(s(2, 1), 1, 1)}, want: []*Tensor{f32(s(2, 1, 1), 3, 7)}},
		{name: "vector", op: "MatMul", in: []*Tensor{f32(s(2), 1, 1), f32(s(2, 3), 1, 2, 3, 4, 5, 6)}, want: []*Tensor{f32(s(3), 5, 7, 9)}},
		{name: "inner_mismatch", op: "MatMul", in: []*Tensor{a, a}, err: "inner dims"},
		{name: "transB_alpha_beta", op: "Gemm", at: attrs{"transB": 1, "alpha": 2.0, "beta": 0.5}, in: []*Tensor{f32(s(1, 2), 1, 2), f32(s(2, 2), 1, 0, 0, 1), f32(s(2), 10, 20)}, want: []*Tensor{f32(s(1, 2), 7, 14)}},
		{name: "opset13_axis", op: "Softmax", opset: 13, at: attrs{"axis": 0}, in: []*Tensor{f32(s(2, 1), 0, 1)}, want: []*Tensor{f32(s(2, 1), sm(0, 1)...)}},
		{name: "opset11_flattens", op: "Softmax", opset: 11, at: attrs{"axis": 1}, in: []*Tensor{f32(s(1, 2, 2), 0, 1, 2, 3)}, want: []*Tensor{f32(s(1, 2, 2), sm(0, 1, 2, 3)...)}},
		{name: "last", op: "LogSoftmax", opset: 13, in: []*Tensor{f32(s(2), 0, 0)}, want: []*Tensor{f32(s(2), -float32(math.Ln2), -float32(math.Ln2))}},
		{name: "attr_axes", op: "ReduceMean", opset: 13, at: attrs{"axes": []int64{1}}, in: []*Tensor{a}, want: []*Tensor{f32(s(2, 1), 2, 5)}},
		{name: "input_axes_opset18", op: "ReduceMean", opset: 18, at: attrs{"keepdims": 0}, in: []*Tensor{a, i64s(s(1), 0)}, want: []*Tensor{f32(s(3), 2.5, 3.5, 4.5)}},
		{name: "all", op: "ReduceSum", opset: 13, at: attrs{"keepdims": 0}, in: []*Tensor{a}, want: []*Tensor{f32(nil, 21)}},
		{name: "attr_opset11", op: "ReduceSum", opset: 11, at: attrs{"axes": []int64{0}}, in: []*Tensor{a}, want: []*Tensor{f32(s(1, 3), 5, 7, 9)}},
		{name: "noop_empty", op: "ReduceSum", opset: 13, at: attrs{"noop_with_empty_axes": 1}, in: []*Tensor{a}, want: []*Tensor{a}},
		{name: "basic", op: "ReduceMax", at: attrs{"axes": []int64{-1}}, in: []*Tensor{a}, want: []*Tensor{f32(s(2, 1), 3, 6)}},
		{name: "basic", op: "ReduceMin", at: attrs{"axes": []int64{0}, "keepdims": 0}, in: []*Tensor{a}, want: []*Tensor{f32(s(3), 1, 2, 3)}},
		{name: "int", op: "ReduceProd", at: attrs{"axes": []int64{1}}, in: []*Tensor{i64s(s(2, 2), 2, 3, 4, 5)}, want: []*Tensor{i64s(s(2, 1), 6, 20)}},
		{name: "basic", op: "ReduceL2", at: attrs{"axes": []int64{1}}, in: []*Tensor{f32(s(1, 2), 3, 4)}, want: []*Tensor{f32(s(1, 1), 5)}},
		{name: "basic", op: "ReduceSumSquare", at: attrs{"axes": []int64{1}}, in: []*Tensor{f32(s(1, 2), 3, 4)}, want: []*Tensor{f32(s(1, 1), 25)}},
		{name: "keepdims0", op: "ArgMax", at: attrs{"axis": 1, "keepdims": 0}, in: []*Tensor{f32(s(2, 3), 1, 5, 5, 9, 0, 2)}, want: []*Tensor{i64s(s(2), 1, 0)}},
		{name: "select_last", op: "ArgMax", at: attrs{"axis": 1, "select_last_index": 1}, in: []*Tensor{f32(s(1, 3), 1, 5, 5)}, want: []*Tensor{i64s(s(1, 1), 2)}},
		{name: "largest", op: "TopK", in: []*Tensor{f32(s(1, 4), 3, 1, 4, 2), i64s(s(1), 2)}, want: []*Tensor{f32(s(1, 2), 4, 3), i64s(s(1, 2), 2, 0)}},
		{name: "smallest", op: "TopK", at: attrs{"largest": 0}, in: []*Tensor{f32(s(4), 3, 1, 4, 2), i64s(s(1), 1)}, want: []*Tensor{f32(s(1), 1), i64s(s(1), 1)}},
		{name: "last_axis", op: "LayerNormalization", at: attrs{"epsilon": 0.0}, in: []*Tensor{f32(s(1, 2), 1, 3), f32(s(2), 2, 2), f32(s(2), 1, 0)}, want: []*Tensor{f32(s(1, 2), -1, 2)}},
		{name: "rms_last_axis", op: "RMSNormalization", at: attrs{"epsilon": 0.0}, in: []*Tensor{f32(s(1, 2), 3, 4), f32(s(2), 1, 2)}, want: []*Tensor{f32(s(1, 2), 0.8485281, 2.2627417)}},
		{name: "rms_axis1", op: "RMSNormalization", at: attrs{"axis": 1, "epsilon": 0.0}, in: []*Tensor{f32(s(1, 2, 2), 2, -2, 2, -2), f32(s(2, 2), 1, 1, 3, 3)}, want: []*Tensor{f32(s(1, 2, 2), 1, -1, 3, -3)}},
		{name: "rope_halves", op: "RotaryEmbedding", opset: 23, in: []*Tensor{f32(s(1, 1, 1, 4), 1, 2, 3, 4), f32(s(1, 1, 2), 0, 1), f32(s(1, 1, 2), 1, 0)}, want: []*Tensor{f32(s(1, 1, 1, 4), -3, 2, 1, 4)}},
		{name: "rope_interleaved", op: "RotaryEmbedding", opset: 23, at: attrs{"interleaved": 1}, in: []*Tensor{f32(s(1, 1, 1, 4), 1, 2, 3, 4), f32(s(1, 1, 2), 0, 1), f32(s(1, 1, 2), 1, 0)}, want: []*Tensor{f32(s(1, 1, 1, 4), -2, 1, 3, 4)}},
		{name: "rope_partial", op: "RotaryEmbedding", opset: 23, at: attrs{"rotary_embedding_dim": 2}, in: []*Tensor{f32(s(1, 1, 1, 4), 1, 2, 3, 4), f32(s(1, 1, 2), 0, 1), f32(s(1, 1, 2), 1, 0)}, want: []*Tensor{f32(s(1, 1, 1, 4), -2, 1, 3, 4)}},
		{name: "rope_3d_position_ids", op: "RotaryEmbedding", opset: 23, at: attrs{"num_heads": 1}, in: []*Tensor{f32(s(1, 2, 4), 1, 2, 3, 4, 5, 6, 7, 8), f32(s(3, 2), 1, 1, 0, 0, 0, 1), f32(s(3, 2), 0, 0, 1, 1, 1, 0), i64s(s(1, 2), 2, 0)}, want: []*Tensor{f32(s(1, 2, 4), -3, 2, 1, 4, 5, 6, 7, 8)}},
		{name: "rope_3d_needs_heads", op: "RotaryEmbedding", opset: 23, in: []*Tensor{f32(s(1, 2, 4), 1, 2, 3, 4, 5, 6, 7, 8), f32(s(1, 2, 2), 1, 1, 1, 1), f32(s(1, 2, 2), 0, 0, 0, 0)}, err: "num_heads"},
		{name: "rope_position_out_of_cache", op: "RotaryEmbedding", opset: 23, at: attrs{"num_heads": 1}, in: []*Tensor{f32(s(1, 1, 2), 1, 2), f32(s(1, 1), 1), f32(s(1, 1), 0), i64s(s(1, 1), 5)}, err: "outside the cache"},
		{name: "rms_epsilon", op: "RMSNormalization", at: attrs{"epsilon": 1.0}, in: []*Tensor{f32(s(1, 1), 0), f32(s(1), 5)}, want: []*Tensor{f32(s(1, 1), 0)}},
		{name: "axis1_no_bias", op: "LayerNormalization", at: attrs{"axis": 1, "epsilon": 0.0}, in: []*Tensor{f32(s(1, 2, 2), 1, 1, 3, 3), f32(s(2, 2), 1, 1, 1, 1)}, want: []*Tensor{f32(s(1, 2, 2), -1, -1, 1, 1)}},
		{name: "per_channel", op: "InstanceNormalization", in: []*Tensor{f32(s(1, 2, 2), 1, 3, 5, 5), f32(s(2), 1, 1), f32(s(2), 0, 7)}, want: []*Tensor{f32(s(1, 2, 2), -1, 1, 7, 7)}},
		{name: "two_groups", op: "GroupNormalization", opset: 21, at: attrs{"num_groups": 2}, in: []*Tensor{f32(s(1, 4, 1), 1, 3, 10, 10), f32(s(4), 1, 2, 1, 1), f32(s(4), 0, 0, 5, 5)}, want: []*Tensor{f32(s(1, 4, 1), -1, 2, 5, 5)}},
		{name: "inference", op: "BatchNormalization", opset: 15, at: attrs{"epsilon": 0.0}, in: []*Tensor{f32(s(1, 2, 1), 3, 3), f32(s(2), 2, 1), f32(s(2), 1, 0), f32(s(2), 1, 3), f32(s(2), 4, 1)}, want: []*Tensor{f32(s(1, 2, 1), 3, 0)}},
	})
}

func TestConvPoolResizeEinsum(t *testing.T) {
	img := f32(s(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9)
	ones2 := f32(s(1, 1, 2, 2), 1, 1, 1, 1)
	runCases(t, []opCase{
		{name: "2x2_valid", op: "Conv", in: []*Tensor{img, ones2}, want: []*Tensor{f32(s(1, 1, 2, 2), 12, 16, 24, 28)}},
		{name: "pad_stride_bias", op: "Conv", at: attrs{"pads": []int64{1, 1, 1, 1}, "strides": []int64{2, 2}}, in: []*Tensor{img, ones2, f32(s(1), 100)}, want: []*Tensor{f32(s(1, 1, 2, 2), 101, 105, 111, 128)}},
		{name: "dilation", op: "Conv", at: attrs{"dilations": []int64{2, 2}}, in: []*Tensor{img, ones2}, want: []*Tensor{f32(s(1, 1, 1, 1), 20)}},
		{name: "same_upper", op: "Conv", at: attrs{"auto_pad": "SAME_UPPER"}, in: []*Tensor{img, ones2}, want: []*Tensor{f32(s(1, 1, 3, 3), 12, 16, 9, 24, 28, 15, 15, 17, 9)}},
		{name: "groups_depthwise", op: "Conv", at: attrs{"group": 2}, in: []*Tensor{f32(s(1, 2, 1, 2), 1, 2, 3, 4), f32(s(2, 1, 1, 2), 1, 1, 1, -1)}, want: []*Tensor{f32(s(1, 2, 1, 1), 3, -1)}},
		{name: "3d", op: "Conv", in: []*Tensor{f32(s(1, 1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8), f32(s(2, 1, 2, 1, 1), 1, 1, 1, -1)}, want: []*Tensor{f32(s(1, 2, 1, 2, 2), 6, 8, 10, 12, -4, -4, -4, -4)}},
		{name: "stride2", op: "ConvTranspose", at: attrs{"strides": []int64{2, 2}}, in: []*Tensor{f32(s(1, 1, 2, 2), 1, 2, 3, 4), ones2}, want: []*Tensor{f32(s(1, 1, 4, 4), 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4)}},
		{name: "overlap_pads", op: "ConvTranspose", at: attrs{"pads": []int64{0, 0, 1, 1}}, in: []*Tensor{f32(s(1, 1, 2, 2), 1, 2, 3, 4), ones2}, want: []*Tensor{f32(s(1, 1, 2, 2), 1, 3, 4, 10)}},
		{name: "2x2", op: "MaxPool", at: attrs{"kernel_shape": []int64{2, 2}}, in: []*Tensor{img}, want: []*Tensor{f32(s(1, 1, 2, 2), 5, 6, 8, 9)}},
		{name: "ceil_mode", op: "MaxPool", at: attrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}, "ceil_mode": 1}, in: []*Tensor{img}, want: []*Tensor{f32(s(1, 1, 2, 2), 5, 6, 8, 9)}},
		{name: "pad_excluded", op: "AveragePool", at: attrs{"kernel_shape": []int64{2, 2}, "pads": []int64{1, 1, 0, 0}, "strides": []int64{2, 2}}, in: []*Tensor{img}, want: []*Tensor{f32(s(1, 1, 2, 2), 1, 2.5, 5.5, 7)}},
		{name: "pad_included", op: "AveragePool", at: attrs{"kernel_shape": []int64{2, 2}, "pads": []int64{1, 1, 0, 0}, "strides": []int64{2, 2}, "count_include_pad": 1}, in: []*Tensor{img}, want: []*Tensor{f32(s(1, 1, 2, 2), 0.25, 1.25, 2.75, 7)}},
		{name: "3d", op: "AveragePool", at: attrs{"kernel_shape": []int64{2, 2, 2}}, in: []*Tensor{f32(s(1, 1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8)}, want: []*Tensor{f32(s(1, 1, 1, 1, 1), 4.5)}},
		{name: "basic", op: "GlobalAveragePool", in: []*Tensor{img}, want: []*Tensor{f32(s(1, 1, 1, 1), 5)}},
		{name: "nearest_asymmetric_floor", op: "Resize", opset: 13, at: attrs{"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 2), nil, f32(s(4), 1, 1, 1, 2)}, want: []*Tensor{f32(s(1, 1, 1, 4), 1, 1, 2, 2)}},
		{name: "linear_half_pixel", op: "Resize", opset: 13, at: attrs{"mode": "linear"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 3), nil, f32(s(4), 1, 1, 1, 2)}, want: []*Tensor{f32(s(1, 1, 1, 4), 1, 1.5, 2.5, 3)}},
		{name: "linear_align_corners_sizes", op: "Resize", opset: 13, at: attrs{"mode": "linear", "coordinate_transformation_mode": "align_corners"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 3), nil, nil, i64s(s(4), 1, 1, 1, 3)}, want: []*Tensor{f32(s(1, 1, 1, 3), 1, 2, 3)}},
		{name: "nearest_round_prefer_ceil", op: "Resize", opset: 13, at: attrs{"nearest_mode": "round_prefer_ceil", "coordinate_transformation_mode": "asymmetric"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 2), nil, f32(s(4), 1, 1, 1, 2)}, want: []*Tensor{f32(s(1, 1, 1, 4), 1, 2, 2, 2)}},
		{name: "nearest_round_prefer_floor", op: "Resize", opset: 13, at: attrs{"coordinate_transformation_mode": "asymmetric"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 2), nil, f32(s(4), 1, 1, 1, 2)}, want: []*Tensor{f32(s(1, 1, 1, 4), 1, 1, 2, 2)}},
		{name: "nearest_ceil", op: "Resize", opset: 13, at: attrs{"nearest_mode": "ceil", "coordinate_transformation_mode": "asymmetric"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 2), nil, f32(s(4), 1, 1, 1, 2)}, want: []*Tensor{f32(s(1, 1, 1, 4), 1, 2, 2, 2)}},
		{name: "linear_2d_half_pixel", op: "Resize", opset: 13, at: attrs{"mode": "linear"}, in: []*Tensor{f32(s(1, 1, 2, 2), 0, 4, 8, 12), nil, f32(s(4), 1, 1, 2, 2)}, want: []*Tensor{f32(s(1, 1, 4, 4), 0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12)}},
		{name: "pytorch_half_pixel", op: "Resize", opset: 13, at: attrs{"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, in: []*Tensor{f32(s(1, 1, 1, 2), 1, 3), nil, nil, i64s(s(4), 1, 1, 1, 1)}, want: []*Tensor{f32(s(1, 1, 1, 1), 1)}},
		{name: "nearest_opset9", op: "Upsample", opset: 9, in: []*Tensor{f32(s(1, 2), 1, 2), f32(s(2), 2, 2)}, want: []*Tensor{f32(s(2, 4), 1, 1, 2, 2, 1, 1, 2, 2)}},
		{name: "bhid_bhjd", op: "Einsum", opset: 12, at: attrs{"equation": "bhid,bhjd->bhij"}, in: []*Tensor{f32(s(1, 1, 2, 2), 1, 0, 0, 1), f32(s(1, 1, 3, 2), 1, 2, 3, 4, 5, 6)}, want: []*Tensor{f32(s(1, 1, 2, 3), 1, 3, 5, 2, 4, 6)}},
		{name: "bij_bjd", op: "Einsum", opset: 12, at: attrs{"equation": "bij,bjd->bid"}, in: []*Tensor{f32(s(1, 1, 2), 1, 1), f32(s(1, 2, 2), 1, 2, 3, 4)}, want: []*Tensor{f32(s(1, 1, 2), 4, 6)}},
		{name: "outer_implicit", op: "Einsum", opset: 12, at: attrs{"equation": "i,j"}, in: []*Tensor{f32(s(2), 1, 2), f32(s(2), 3, 4)}, want: []*Tensor{f32(s(2, 2), 3, 4, 6, 8)}},
		{name: "transpose_sum", op: "Einsum", opset: 12, at: attrs{"equation": "ij->j"}, in: []*Tensor{a2x3()}, want: []*Tensor{f32(s(3), 5, 7, 9)}},
		{name: "ellipsis", op: "Einsum", opset: 12, at: attrs{"equation": "...ij,...jk->...ik"}, in: []*Tensor{f32(s(2, 1, 1), 2, 3), f32(s(2, 1, 2), 1, 2, 3, 4)}, want: []*Tensor{f32(s(2, 1, 2), 2, 4, 9, 12)}},
		{name: "diagonal_rejected", op: "Einsum", opset: 12, at: attrs{"equation": "ii->i"}, in: []*Tensor{f32(s(2, 2), 1, 2, 3, 4)}, err: "diagonals"},
	})
}

func a2x3() *Tensor { return f32(s(2, 3), 1, 2, 3, 4, 5, 6) }

func TestUnsupportedOpError(t *testing.T) {
	_, err := runOp("Frobnicate", "", 17, nil, []*Tensor{f32(s(1), 1)}, 1)
	if err == nil || !strings.Contains(err.Error(), "unsupported op Frobnicate (domain ai.onnx, opset 17)") {
		t.Fatalf("got %v", err)
	}
}

func TestMoreOps(t *testing.T) {
	runCases(t, []opCase{
		{name: "basic", op: "Softsign", in: []*Tensor{f32(s(2), 1, -3)}, want: []*Tensor{f32(s(2), 0.5, -0.75)}},
		{name: "basic", op: "Tan", in: []*Tensor{f32(s(1), math.Pi/4)}, want: []*Tensor{f32(s(1), 1)}},
		{name: "alpha", op: "ThresholdedRelu", at: attrs{"alpha": 2.0}, in: []*Tensor{f32(s(2), 2, 3)}, want: []*Tensor{f32(s(2), 0, 3)}},
		{name: "default", op: "Selu", in: []*Tensor{f32(s(2), 1, 0)}, want: []*Tensor{f32(s(2), 1.050701, 0)}},
		{name: "basic", op: "ArgMin", at: attrs{"axis": 0}, in: []*Tensor{f32(s(3), 2, -1, 5)}, want: []*Tensor{i64s(s(1), 1)}},
		{name: "basic", op: "ReduceL1", at: attrs{"axes": []int64{0}}, in: []*Tensor{f32(s(2), -1, 2)}, want: []*Tensor{f32(s(1), 3)}},
		{name: "basic", op: "ReduceLogSumExp", at: attrs{"axes": []int64{0}, "keepdims": 0}, in: []*Tensor{f32(s(2), 0, 0)}, want: []*Tensor{f32(nil, float32(math.Ln2))}},
		{name: "basic", op: "GlobalMaxPool", in: []*Tensor{f32(s(1, 2, 2), 1, 4, -1, -3)}, want: []*Tensor{f32(s(1, 2, 1), 4, -1)}},
		{name: "linear_opset9", op: "Upsample", opset: 9, at: attrs{"mode": "linear"}, in: []*Tensor{f32(s(1, 2), 1, 3), f32(s(2), 1, 2)}, want: []*Tensor{f32(s(1, 4), 1, 2, 3, 3)}},
		{name: "scales_attr_opset7", op: "Upsample", opset: 7, at: attrs{"scales": []float32{1, 2}}, in: []*Tensor{f32(s(1, 2), 1, 3)}, want: []*Tensor{f32(s(1, 4), 1, 1, 3, 3)}},
		{name: "opset10", op: "Resize", opset: 10, in: []*Tensor{f32(s(1, 2), 1, 3), f32(s(2), 1, 2)}, want: []*Tensor{f32(s(1, 4), 1, 1, 3, 3)}},
		{name: "cubic_linear_data", op: "Resize", opset: 13, at: attrs{"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, in: []*Tensor{f32(s(1, 4), 0, 1, 2, 3), nil, nil, i64s(s(2), 1, 7)}, want: []*Tensor{f32(s(1, 7), 0, 0.40625, 1, 1.5, 2, 2.59375, 3)}},
		{name: "antialias_rejected", op: "Resize", opset: 18, at: attrs{"mode": "linear", "antialias": 1}, in: []*Tensor{f32(s(1, 2), 1, 3), nil, f32(s(2), 1, 2)}, err: "not supported"},
		{name: "opset11_flattens", op: "LogSoftmax", opset: 11, in: []*Tensor{f32(s(1, 2), 0, 0)}, want: []*Tensor{f32(s(1, 2), -float32(math.Ln2), -float32(math.Ln2))}},
		{name: "wrap", op: "Pad", opset: 19, at: attrs{"mode": "wrap"}, in: []*Tensor{f32(s(3), 1, 2, 3), i64s(s(2), 1, 1)}, want: []*Tensor{f32(s(5), 3, 1, 2, 3, 1)}},
		{name: "bool", op: "Where", in: []*Tensor{bools(s(2), true, false), bools(s(2), true, true), bools(s(2), false, false)}, want: []*Tensor{bools(s(2), true, false)}},
		{name: "int", op: "MatMul", in: []*Tensor{i64s(s(1, 2), 1, 2), i64s(s(2, 1), 3, 4)}, want: []*Tensor{i64s(s(1, 1), 11)}},
		{name: "int_rejected", op: "Softmax", opset: 13, in: []*Tensor{i64s(s(2), 1, 2)}, err: "must be a float tensor"},
		{name: "int_rejected", op: "Conv", in: []*Tensor{i64s(s(1, 1, 1), 1), f32(s(1, 1, 1), 1)}, err: "must be a float tensor"},
	})
}
