package graph

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph/onnxpb"
	"google.golang.org/protobuf/proto"
)

// onnxShape is one line of a testdata/golden/shapes file: the type onnx's
// shape inference gives a node output (testdata/export/infer_shapes.py).
type onnxShape struct {
	name   string
	dtype  DType
	ranked bool
	dims   []string // a number, a symbol the graph inputs declare, or "?"
}

// onnxGolden is one fixture's golden: the unpinned run, the pins, and the
// pinned run.
type onnxGolden struct {
	unpinned, pinned []onnxShape
	pins             map[string][]int64
	// runtime is what ONNX Runtime computes on the pinned inputs, for the
	// values whose pinned onnx line is not already that exact shape
	runtime map[string][]int64
}

func readONNXGolden(t *testing.T, path string) onnxGolden {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run testdata/export/infer_shapes.py)", err)
	}
	defer f.Close()
	g := onnxGolden{pins: map[string][]int64{}, runtime: map[string][]int64{}}
	inRuntime := false
	var cur *[]onnxShape
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
		case line == "runtime":
			inRuntime = true
		case inRuntime:
			name, dims, ok := strings.Cut(line, " ")
			shape := []int64{}
			if inner := strings.Trim(dims, "[]"); ok && inner != "" {
				for _, d := range strings.Split(inner, ",") {
					x, err := strconv.ParseInt(d, 10, 64)
					if err != nil {
						t.Fatalf("%s: bad line %q", path, line)
					}
					shape = append(shape, x)
				}
			}
			g.runtime[name] = shape
		case line == "unpinned":
			cur = &g.unpinned
		case strings.HasPrefix(line, "pinned"):
			for _, p := range strings.Fields(line)[1:] {
				name, dims, err := ParseShapePin(p)
				if err != nil {
					t.Fatal(err)
				}
				g.pins[name] = dims
			}
			cur = &g.pinned
		default:
			f := strings.Fields(line)
			dt, ok := onnxpb.TensorProto_DataType_value[f[1]]
			if len(f) != 3 || !ok || cur == nil {
				t.Fatalf("%s: bad line %q", path, line)
			}
			s := onnxShape{name: f[0], dtype: DType(dt), ranked: f[2] != "*"}
			if s.ranked && f[2] != "[]" {
				s.dims = strings.Split(strings.Trim(f[2], "[]"), ",")
			}
			*cur = append(*cur, s)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// disagreement says how attnopt's type for v falls short of onnx's, or "".
func disagreement(v *Value, want onnxShape) string {
	got := v.Type
	if got.DType != want.dtype {
		return fmt.Sprintf("type %s, onnx %s", got.DType, want.dtype)
	}
	if !want.ranked {
		return ""
	}
	if !got.Ranked || len(got.Shape) != len(want.dims) {
		return fmt.Sprintf("shape %s, onnx [%s]", got, strings.Join(want.dims, ","))
	}
	for i, w := range want.dims {
		d := got.Shape[i]
		if w == "?" {
			continue
		}
		if n, err := strconv.ParseInt(w, 10, 64); err == nil {
			if x, ok := d.Value(); !ok || x != n {
				return fmt.Sprintf("dim %d is %s, onnx %d (shape %s)", i, d, n, got.Shape)
			}
		} else if !d.Equal(Sym(w)) {
			return fmt.Sprintf("dim %d is %s, onnx %s (shape %s)", i, d, w, got.Shape)
		}
	}
	return ""
}

// contradiction says where t claims a rank or a size that differs from
// what ONNX Runtime computed, or "".
func contradiction(t Type, real []int64) string {
	if !t.Ranked {
		return ""
	}
	if len(t.Shape) != len(real) {
		return fmt.Sprintf("shape %s, ONNX Runtime computes %v", t, real)
	}
	for i, d := range t.Shape {
		if x, ok := d.Value(); ok && x != real[i] {
			return fmt.Sprintf("dim %d is %d, ONNX Runtime computes %v", i, x, real)
		}
	}
	return ""
}

// realShapes is every node output's shape when ONNX Runtime runs the
// pinned inputs: the runtime section, and the pinned lines it leaves out
// because onnx already inferred them exactly.
func realShapes(g onnxGolden) map[string][]int64 {
	real := map[string][]int64{}
	for _, w := range g.pinned {
		if x, ok := exactShape(w); ok {
			real[w.name] = x
		}
	}
	for name, x := range g.runtime {
		real[name] = x
	}
	return real
}

// exactShape is a golden line's shape when every dim is a number.
func exactShape(s onnxShape) ([]int64, bool) {
	if !s.ranked {
		return nil, false
	}
	out := []int64{}
	for _, d := range s.dims {
		x, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, x)
	}
	return out, true
}

// loadWithoutValueInfo loads a fixture with its value_info removed, as
// infer_shapes.py gave it to onnx: both sides infer every intermediate type.
func loadWithoutValueInfo(t *testing.T, path string) *Model {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pb onnxpb.ModelProto
	if err := proto.Unmarshal(data, &pb); err != nil {
		t.Fatal(err)
	}
	pb.Graph.ValueInfo = nil
	m, err := FromProto(&pb, filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// onnxAccepted lists where attnopt's inference may know less than onnx's,
// keyed fixture/run/value, with the reason.
var onnxAccepted = map[string]string{}

// attnopt's shape inference agrees with onnx's (data propagation on, no
// value_info) on every fixture, unpinned and with every input pinned to its
// test data's shape: wherever onnx infers a type, a rank or a dim, attnopt
// infers the same, except where onnxAccepted says why not. Pinned, no rank
// or size attnopt infers contradicts what ONNX Runtime computes on those
// inputs.
func TestInferAgreesWithONNX(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "MANIFEST.json"))
	if err != nil {
		t.Skip("testdata/MANIFEST.json not present")
	}
	var man struct {
		Models []struct{ Name, File string }
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	for _, fx := range man.Models {
		t.Run(fx.Name, func(t *testing.T) {
			golden := readONNXGolden(t, filepath.Join("..", "testdata", "golden", "shapes", fx.Name+".txt"))
			path := filepath.Join("..", "testdata", fx.File)
			for _, run := range []struct {
				name string
				pins map[string][]int64
				want []onnxShape
			}{{"unpinned", nil, golden.unpinned}, {"pinned", golden.pins, golden.pinned}} {
				m := loadWithoutValueInfo(t, path)
				if run.pins != nil {
					if err := (Pins{Shapes: run.pins}).Apply(m.Graph); err != nil {
						t.Fatal(err)
					}
				}
				bad := 0
				for _, w := range run.want {
					key := fx.Name + "/" + run.name + "/" + w.name
					v := m.Graph.Value(w.name)
					if v == nil {
						t.Errorf("%s: onnx infers %q, which attnopt does not have", run.name, w.name)
						continue
					}
					msg := disagreement(v, w)
					if why, ok := onnxAccepted[key]; ok {
						if msg == "" {
							t.Errorf("%s: accepted difference no longer happens (%s); remove it", key, why)
						}
						continue
					}
					if msg != "" {
						bad++
						if bad <= 20 {
							p := v.Producer()
							op := ""
							if p != nil {
								op = p.Domain + "." + p.OpType
							}
							t.Errorf("%s: %s (%s): %s", run.name, w.name, op, msg)
						}
					}
				}
				if bad > 20 {
					t.Errorf("%s: %d disagreements in all", run.name, bad)
				}
				// No size attnopt infers may differ from the real one; a
				// symbolic dim is evaluated at the sizes the pins give its
				// symbols (4*batch is 8 at batch 2).
				syms, err := Pins{Shapes: golden.pins}.symbols(m.Graph)
				if run.pins != nil {
					syms, err = m.Graph.pinned, nil
				}
				if err != nil {
					t.Fatal(err)
				}
				for name, x := range realShapes(golden) {
					v := m.Graph.Value(name)
					if v == nil {
						continue
					}
					ty := v.Type
					ty.Shape = append(Shape(nil), ty.Shape...)
					if msg := contradiction(pinType(ty, syms), x); msg != "" {
						t.Errorf("%s: %s: %s (attnopt infers %s)", run.name, name, msg, v.Type)
					}
				}
			}
		})
	}
}
