package eval

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

func TestTensorProtoRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cases := []*Tensor{
		f32(s(2, 2), 1, -2.5, float32(math.Inf(1)), 0),
		i64s(s(3), -1, 0, 1<<40),
		bools(s(2), true, false),
		{DType: graph.Float16, Shape: s(2), F: []float32{1.5, -0.099975586}},
		{DType: graph.BFloat16, Shape: s(1), F: []float32{3.140625}},
		{DType: graph.Int32, Shape: s(2), I: []int64{-7, 7}},
		{DType: graph.Uint8, Shape: s(2), I: []int64{0, 255}},
		{DType: graph.Float64, Shape: nil, F: []float32{0.25}},
	}
	for i, c := range cases {
		p := filepath.Join(dir, "t.pb")
		if err := WriteTensorProtoFile(p, c, "x"); err != nil {
			t.Fatal(err)
		}
		got, name, err := ReadNamedTensorProtoFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if name != "x" {
			t.Errorf("case %d: name %q", i, name)
		}
		if d := diff(got, c, 0, 0); d != "" {
			t.Errorf("case %d (%s): %s", i, c.DType, d)
		}
	}
}

// Typed fields (float_data, int32_data for fp16 bits, int64_data) decode
// like raw_data.
func TestTensorProtoTypedFields(t *testing.T) {
	dt := func(d graph.DType) *int32 { x := int32(d); return &x }
	cases := []struct {
		pb   *onnxpb.TensorProto
		want *Tensor
	}{
		{&onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Float32), FloatData: []float32{1, 2}}, f32(s(2), 1, 2)},
		{&onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Float16), Int32Data: []int32{0x3c00}}, &Tensor{DType: graph.Float16, Shape: s(1), F: []float32{1}}},
		{&onnxpb.TensorProto{Dims: []int64{2}, DataType: dt(graph.Int64), Int64Data: []int64{5, -5}}, i64s(s(2), 5, -5)},
		{&onnxpb.TensorProto{Dims: []int64{1}, DataType: dt(graph.Bool), Int32Data: []int32{1}}, bools(s(1), true)},
	}
	for i, c := range cases {
		data, err := proto.Marshal(c.pb)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := DecodeTensorProto(data)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(got, c.want, 0, 0); d != "" {
			t.Errorf("case %d: %s", i, d)
		}
	}
}

func TestGraphTensorConversion(t *testing.T) {
	x := &Tensor{DType: graph.Float16, Shape: s(3), F: []float32{1, 0.5, -2}}
	gt, err := x.ToGraph("c")
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromGraph(gt)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(back, x, 0, 0); d != "" {
		t.Fatal(d)
	}
	// fp16 rounding happens at op outputs
	h := &Tensor{DType: graph.Float16, Shape: s(1), F: []float32{1.0001}}
	if h.normalize().F[0] != 1 {
		t.Fatalf("fp16 rounding: %v", h.F[0])
	}
}

// The bulk rounding is bit-identical to graph's converters on a stride
// through every float32 bit pattern (both signs, subnormals, the fp16
// overflow edge, Inf and NaN).
func TestRoundToMatchesConverters(t *testing.T) {
	var in []float32
	for b := uint64(0); b < 1<<32; b += 251 {
		in = append(in, math.Float32frombits(uint32(b)))
	}
	for _, x := range []float32{65504, 65519.99, 65520, -65520, 0x1p-14, 0x1p-24, 0x1p-25, 1 + 0x1p-11, 1 + 3*0x1p-11} {
		in = append(in, x)
	}
	for _, dt := range []graph.DType{graph.Float16, graph.BFloat16} {
		got := append([]float32{}, in...)
		roundTo(dt, got)
		for i, x := range in {
			var want float32
			if dt == graph.Float16 {
				want = graph.HalfToFloat(graph.FloatToHalf(x))
			} else {
				want = math.Float32frombits(uint32(graph.FloatToBF16(x)) << 16)
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%s: %g (%#x) rounds to %#x, want %#x", dt, x, math.Float32bits(x), math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
	}
}
