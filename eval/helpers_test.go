package eval

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/corpus"
	"google.golang.org/protobuf/proto"
)

// tolFor is the default absolute tolerance per dtype (docs/design.md §8).
func tolFor(dt graph.DType) float64 {
	switch dt {
	case graph.Float16:
		return 2e-2
	case graph.BFloat16:
		return 5e-2
	}
	return 1e-4
}

// diff compares got with want: same dtype and shape, NaN where want is NaN,
// |got-want| <= atol + rtol·|want| elsewhere. It returns "" when they agree.
func diff(got, want *Tensor, atol, rtol float64) string {
	if got.DType != want.DType {
		return fmt.Sprintf("dtype %s, want %s", got.DType, want.DType)
	}
	if !sameShape(got.Shape, want.Shape) {
		return fmt.Sprintf("shape %v, want %v", got.Shape, want.Shape)
	}
	worst, wi := 0.0, -1
	for i := 0; i < want.Numel(); i++ {
		g, w := got.Float64At(i), want.Float64At(i)
		if math.IsNaN(w) || math.IsNaN(g) {
			if math.IsNaN(w) != math.IsNaN(g) {
				return fmt.Sprintf("element %d: got %v, want %v", i, g, w)
			}
			continue
		}
		if math.IsInf(w, 0) || math.IsInf(g, 0) {
			if g != w {
				return fmt.Sprintf("element %d: got %v, want %v", i, g, w)
			}
			continue
		}
		d := math.Abs(g - w)
		if d > atol+rtol*math.Abs(w) && d > worst {
			worst, wi = d, i
		}
	}
	if wi >= 0 {
		return fmt.Sprintf("max error %.3g at %d (got %v, want %v)", worst, wi, got.Float64At(wi), want.Float64At(wi))
	}
	return ""
}

// loadDataSet reads the inputs and outputs of a test_data_set folder in
// the model's declared order.
func loadDataSet(m *graph.Model, dir string) (map[string]*Tensor, []*Tensor, error) {
	ins := map[string]*Tensor{}
	for i, v := range m.Graph.Inputs {
		t, err := ReadTensorProtoFile(filepath.Join(dir, fmt.Sprintf("input_%d.pb", i)))
		if err != nil {
			return nil, nil, err
		}
		ins[v.Name] = t
	}
	var outs []*Tensor
	for i := range m.Graph.Outputs {
		t, err := ReadTensorProtoFile(filepath.Join(dir, fmt.Sprintf("output_%d.pb", i)))
		if err != nil {
			return nil, nil, err
		}
		outs = append(outs, t)
	}
	return ins, outs, nil
}

// randomInputs pins symbolic dims small: totals of past and new sequence
// lengths ("total_seq_len", "past_seq_len+seq_len") get 4, the rest 2.
func randomInputs(m *graph.Model, seed int64) (map[string]*Tensor, error) {
	pins := map[string]int{}
	for _, v := range m.Graph.Inputs {
		for _, d := range v.Type.Shape {
			if name := d.String(); !d.Static() && (strings.Contains(name, "total") || strings.Contains(name, "+")) {
				pins[name] = 4
			}
		}
	}
	return RandomInputs(m, seed, pins, 2)
}

func listDirs(t *testing.T, pattern string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(pattern)
	sort.Strings(dirs)
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

func short(s string) string {
	return corpus.Rel(s)
}

// attrs are node attributes for runOp: float32, int/int64, string, []int64,
// []float32 or *Tensor values.
type attrs map[string]any

func attrProto(name string, v any) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: &name}
	typ := func(t onnxpb.AttributeProto_AttributeType) { a.Type = &t }
	switch x := v.(type) {
	case float32:
		a.F = &x
		typ(onnxpb.AttributeProto_FLOAT)
	case float64:
		f := float32(x)
		a.F = &f
		typ(onnxpb.AttributeProto_FLOAT)
	case int:
		i := int64(x)
		a.I = &i
		typ(onnxpb.AttributeProto_INT)
	case int64:
		a.I = &x
		typ(onnxpb.AttributeProto_INT)
	case string:
		a.S = []byte(x)
		typ(onnxpb.AttributeProto_STRING)
	case []int64:
		a.Ints = x
		typ(onnxpb.AttributeProto_INTS)
	case []float32:
		a.Floats = x
		typ(onnxpb.AttributeProto_FLOATS)
	case *Tensor:
		data, err := EncodeTensorProto(x, "")
		if err != nil {
			panic(err)
		}
		tp := &onnxpb.TensorProto{}
		if err := proto.Unmarshal(data, tp); err != nil {
			panic(err)
		}
		a.T = tp
		typ(onnxpb.AttributeProto_TENSOR)
	default:
		panic(fmt.Sprintf("attribute %s: unsupported %T", name, v))
	}
	return a
}

// buildOpModel makes a one-node model; nil inputs are omitted optionals.
func buildOpModel(op, domain string, opset int64, at attrs, ins []*Tensor, nOut int) (*graph.Model, map[string]*Tensor, []string, error) {
	str := func(s string) *string { return &s }
	i64 := func(i int64) *int64 { return &i }
	node := &onnxpb.NodeProto{OpType: str(op), Domain: str(domain), Name: str("n")}
	names := make([]string, 0, len(at))
	for k := range at {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		node.Attribute = append(node.Attribute, attrProto(k, at[k]))
	}
	gp := &onnxpb.GraphProto{Name: str("g")}
	feeds := map[string]*Tensor{}
	for i, t := range ins {
		if t == nil {
			node.Input = append(node.Input, "")
			continue
		}
		name := fmt.Sprintf("x%d", i)
		node.Input = append(node.Input, name)
		dt := int32(t.DType)
		gp.Input = append(gp.Input, &onnxpb.ValueInfoProto{Name: str(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: &dt}}}})
		feeds[name] = t
	}
	var outs []string
	for i := 0; i < nOut; i++ {
		name := fmt.Sprintf("y%d", i)
		node.Output = append(node.Output, name)
		gp.Output = append(gp.Output, &onnxpb.ValueInfoProto{Name: str(name)})
		outs = append(outs, name)
	}
	gp.Node = []*onnxpb.NodeProto{node}
	mp := &onnxpb.ModelProto{IrVersion: i64(10), Graph: gp, OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: str(""), Version: i64(opset)}}}
	if domain != "" {
		mp.OpsetImport = append(mp.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: str(domain), Version: i64(1)})
	}
	m, err := graph.FromProto(mp, "")
	return m, feeds, outs, err
}

// runOp runs a single op through the whole runtime (model, attributes,
// executor), the way a real graph would.
func runOp(op, domain string, opset int64, at attrs, ins []*Tensor, nOut int) ([]*Tensor, error) {
	m, feeds, outs, err := buildOpModel(op, domain, opset, at, ins, nOut)
	if err != nil {
		return nil, err
	}
	res, err := Run(m, feeds, Options{Threads: 2})
	if err != nil {
		return nil, err
	}
	var r []*Tensor
	for _, o := range outs {
		r = append(r, res[o])
	}
	return r, nil
}

func f32(shape []int, v ...float32) *Tensor { return FromFloats(shape, v) }
func i64s(shape []int, v ...int64) *Tensor  { return FromInts(shape, v) }
func bools(shape []int, v ...bool) *Tensor  { return FromBools(shape, v) }

// randTensor is seeded N(0,1) data.
func randTensor(rng *rand.Rand, shape ...int) *Tensor {
	t := NewTensor(graph.Float32, shape)
	for i := range t.F {
		t.F[i] = float32(rng.NormFloat64())
	}
	return t
}
