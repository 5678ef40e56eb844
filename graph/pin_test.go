package graph

import (
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

func symVI(name string, dt DType, dims ...string) *onnxpb.ValueInfoProto {
	s := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		s.Dim = append(s.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt)), Shape: s}}}}
}

// pinModel reads x (batch, seq, 4) and m (batch, seq) into an op attnopt
// has no rule for, whose output the file declares in value_info as
// (batch, 4*seq) — dynamo's spelling — and an Identity after it.
func pinModel() *onnxpb.ModelProto {
	x := symVI("x", Float32, "batch", "seq", "4")
	x.Type.GetTensorType().Shape.Dim[2].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 4}
	g := &onnxpb.GraphProto{Name: proto.String("g"),
		Input: []*onnxpb.ValueInfoProto{x, symVI("m", Bool, "batch", "seq")},
		Node: []*onnxpb.NodeProto{
			{Name: proto.String("opaque"), OpType: proto.String("Opaque"), Domain: proto.String("com.example"), Input: []string{"x", "m"}, Output: []string{"y"}},
			{Name: proto.String("id"), OpType: proto.String("Identity"), Input: []string{"y"}, Output: []string{"z"}},
		},
		ValueInfo: []*onnxpb.ValueInfoProto{symVI("y", Float32, "batch", "4*seq")},
		Output:    []*onnxpb.ValueInfoProto{{Name: proto.String("z")}}}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g, OpsetImport: []*onnxpb.OperatorSetIdProto{
		{Domain: proto.String(""), Version: proto.Int64(17)}, {Domain: proto.String("com.example"), Version: proto.Int64(1)}}}
}

// Pinning keeps what value_info declares (an op without a rule), pinned;
// --shape pins the symbols its input declares; pins that disagree, or a
// --shape that contradicts a static dim, are refused naming both.
func TestPinsKeepDeclaredTypes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pins   Pins
		z      string // want z's type, or "" when refused
		errHas string
	}{
		{"unpinned", Pins{}, "float32[batch,4*seq]", ""},
		{"dims", Pins{Dims: map[string]int64{"batch": 2, "seq": 3}}, "float32[2,12]", ""},
		{"one dim", Pins{Dims: map[string]int64{"seq": 3}}, "float32[batch,12]", ""},
		{"shape", Pins{Shapes: map[string][]int64{"x": {2, 3, 4}}}, "float32[2,12]", ""},
		{"shape and dim agree", Pins{Shapes: map[string][]int64{"m": {2, 3}}, Dims: map[string]int64{"batch": 2}}, "float32[2,12]", ""},
		{"shapes disagree", Pins{Shapes: map[string][]int64{"x": {2, 3, 4}, "m": {5, 3}}}, "", "--shape x gives batch = 2, --shape m gives 5"},
		{"shape and dim disagree", Pins{Shapes: map[string][]int64{"m": {2, 3}}, Dims: map[string]int64{"seq": 7}}, "", "--shape m gives seq = 3, --dim seq gives 7"},
		{"static dim", Pins{Shapes: map[string][]int64{"x": {2, 3, 5}}}, "", "--shape x: dim 2 is 4 in the model, got 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := FromProto(pinModel(), "")
			if err != nil {
				t.Fatal(err)
			}
			err = tc.pins.Apply(m.Graph)
			if tc.z == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one saying %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Graph.Value("z").Type.String(); got != tc.z {
				t.Errorf("z: %s, want %s", got, tc.z)
			}
		})
	}
}

// dim_params that are products read as products; other expressions stay
// one symbol; pinning substitutes symbols in products and in sums' terms.
func TestDimParamsAndPinning(t *testing.T) {
	pins := map[string]int64{"batch": 2, "past": 3, "seq": 4}
	for _, tc := range []struct {
		param        string
		dim          Dim
		pinned       string
		equalsSymbol bool // parses as the one opaque symbol of that name
	}{
		{"batch", Sym("batch"), "2", true},
		{"4*batch", D(4).Mul(Sym("batch")), "8", false},
		{"batch*seq", Sym("batch").Mul(Sym("seq")), "8", false},
		{"2*past+seq", D(2).Mul(Sym("past").Add(Sym("seq"))), "14", false},
		{"past+seq", Sym("past").Add(Sym("seq")), "7", true},
		{"((sequence**2)//sequence)", Sym("sequence"), "sequence", false},
		{"((batch*seq)//batch)", Sym("seq"), "4", false},
		{"(seq*2)//4", Sym("(seq*2)//4"), "(seq*2)//4", true},
		{"seq+1", Sym("seq+1"), "5", true},
		{"(a)(b)", Sym("(a)(b)"), "(a)(b)", true},
		{"seq*", Sym("seq*"), "seq*", true},
		{"other*batch", Sym("batch").Mul(Sym("other")), "2*other", false},
		{strings.Repeat("(", 200) + "batch" + strings.Repeat(")", 200), Sym(strings.Repeat("(", 200) + "batch" + strings.Repeat(")", 200)), strings.Repeat("(", 200) + "batch" + strings.Repeat(")", 200), true},
	} {
		d := parseDimParam(tc.param)
		if !d.Equal(tc.dim) {
			t.Errorf("%q parses as %s, want %s", tc.param, d, tc.dim)
		}
		if d.String() != tc.param && tc.equalsSymbol {
			t.Errorf("%q prints as %q", tc.param, d.String())
		}
		if got := pinDim(d, pins).String(); got != tc.pinned {
			t.Errorf("%q pinned: %s, want %s", tc.param, got, tc.pinned)
		}
	}
}
