package graph_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

func marshal(t *testing.T, m *onnxpb.ModelProto) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// externalModel is a MatMul whose weight lives in dir/loc.
func externalModel(t *testing.T, dir, loc string) string {
	t.Helper()
	b := testgraph.New(17)
	x := b.Input("x", graph.Float32, 2, 3)
	w := "w"
	y := b.Node("MatMul", []string{x, w})
	b.Output(y)
	mp := b.Proto()
	dt := int32(graph.Float32)
	mp.Graph.Initializer = append(mp.Graph.Initializer, &onnxpb.TensorProto{
		Name: proto.String(w), DataType: &dt, Dims: []int64{3, 2},
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{
			{Key: proto.String("location"), Value: proto.String(loc)},
			{Key: proto.String("offset"), Value: proto.String("8")},
			{Key: proto.String("length"), Value: proto.String("24")},
		},
	})
	path := filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(path, marshal(t, mp), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExternalDataRoundTrip(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 40)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	path := externalModel(t, dir, "weights.bin")
	m, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Graph.Value("w").Const
	raw, err := w.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(data[8:32]) {
		t.Fatalf("external bytes = %v, want bytes 8..32", raw)
	}
	out := filepath.Join(t.TempDir(), "out.onnx")
	res, err := m.Save(out)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Copied || len(res.ExternalFiles) != 1 || res.ExternalFiles[0] != "out.onnx.data" {
		t.Fatalf("save result %+v, want the output's own data file", res)
	}
	// Only the tensor's bytes, into a file named after the output: a
	// weights.bin of another model in the output folder is never touched.
	copied, err := os.ReadFile(filepath.Join(filepath.Dir(out), "out.onnx.data"))
	if err != nil || string(copied) != string(data[8:32]) {
		t.Fatalf("data file holds %v (%v), want bytes 8..32", copied, err)
	}
	if st, _ := os.Stat(filepath.Join(filepath.Dir(out), "out.onnx.data")); st.Mode().Perm() != 0o644 {
		t.Fatalf("data file mode %v, want 0644", st.Mode().Perm())
	}
	orig, _ := os.ReadFile(path)
	saved, _ := os.ReadFile(out)
	var a, b onnxpb.ModelProto
	proto.Unmarshal(orig, &a)
	proto.Unmarshal(saved, &b)
	// The reference is the one difference.
	a.Graph.Initializer[len(a.Graph.Initializer)-1].ExternalData = b.Graph.Initializer[len(b.Graph.Initializer)-1].ExternalData
	if diff := cmp.Diff(&a, &b, protocmp.Transform()); diff != "" {
		t.Fatalf("round trip changed the model:\n%s", diff)
	}
	m2, err := graph.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	raw2, err := m2.Graph.Value("w").Const.Raw()
	if err != nil || string(raw2) != string(data[8:32]) {
		t.Fatalf("reloaded bytes %v (%v)", raw2, err)
	}
}

func TestUnknownFieldsSurvive(t *testing.T) {
	mp := testgraph.SAGAN(17, 16, 4, 4).Proto()
	// An unknown field on a node and one on the model, as a newer ONNX
	// version might write them.
	node := mp.Graph.Node[0]
	node.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 77, protowire.VarintType), 5))
	data := marshal(t, mp)
	data = protowire.AppendTag(data, 99, protowire.BytesType)
	data = protowire.AppendString(data, "future")
	m, err := graph.LoadBytes(data, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var want, have onnxpb.ModelProto
	proto.Unmarshal(data, &want)
	proto.Unmarshal(got, &have)
	if diff := cmp.Diff(&want, &have, protocmp.Transform()); diff != "" {
		t.Fatalf("unknown fields lost:\n%s", diff)
	}
	if len(have.ProtoReflect().GetUnknown()) == 0 || len(have.Graph.Node[0].ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("unknown fields missing after round trip")
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	valid := testgraph.SAGAN(17, 16, 4, 4).Bytes()

	huge := testgraph.New(17)
	x := huge.Input("x", graph.Float32, 2)
	huge.Output(huge.Node("Add", []string{x, "big"}))
	hp := huge.Proto()
	dt := int32(graph.Float32)
	hp.Graph.Initializer = append(hp.Graph.Initializer, &onnxpb.TensorProto{Name: proto.String("big"), DataType: &dt, Dims: []int64{1_000_000_000, 1_000_000_000}, RawData: []byte{0, 0, 0, 0}})

	cyc := testgraph.New(17)
	cx := cyc.Input("x", graph.Float32, 2)
	cp := cyc.Proto()
	cp.Graph.Node = []*onnxpb.NodeProto{
		{OpType: proto.String("Add"), Name: proto.String("a"), Input: []string{cx, "b_out"}, Output: []string{"a_out"}},
		{OpType: proto.String("Relu"), Name: proto.String("b"), Input: []string{"a_out"}, Output: []string{"b_out"}},
	}
	cp.Graph.Output = []*onnxpb.ValueInfoProto{{Name: proto.String("b_out")}}

	dangling := testgraph.New(17)
	dangling.Output(dangling.Node("Relu", []string{"nowhere"}))

	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.bin"), make([]byte, 64), 0o644)
	linkDir := t.TempDir()
	os.Symlink(filepath.Join(outside, "secret.bin"), filepath.Join(linkDir, "link.bin"))

	cases := []struct {
		name string
		path string
		want string
	}{
		{"not onnx", write(t, dir, "text.onnx", []byte("this is not a model\n")), "not a valid ONNX model"},
		{"empty", write(t, dir, "empty.onnx", nil), "not an ONNX model"},
		{"truncated", write(t, dir, "trunc.onnx", valid[:len(valid)/2]), "not a valid ONNX model"},
		{"1e18 elements", write(t, dir, "huge.onnx", marshal(t, hp)), "claim more data"},
		{"cycle", write(t, dir, "cycle.onnx", marshal(t, cp)), "cycle"},
		{"dangling", write(t, dir, "dangling.onnx", dangling.Bytes()), "never defined"},
		{"absolute external", externalModel(t, t.TempDir(), filepath.Join(outside, "secret.bin")), "absolute"},
		{"dotdot external", externalModel(t, t.TempDir(), "../secret.bin"), "'..'"},
		{"symlink external", externalModel(t, linkDir, "link.bin"), "outside the model's folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Load(tc.path)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !graph.IsInputError(err) {
				t.Fatalf("error %v is not an input error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line containing %q", err, tc.want)
			}
		})
	}
}

func write(t *testing.T, dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The cause of a load failure stays reachable through the InputError, so a
// caller can tell a missing file from a bad one with errors.Is (a test that
// skips when a model is absent relies on it); the message still names the
// file on one line.
func TestLoadErrorsUnwrapToTheCause(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name     string
		path     string
		notExist bool
		want     string
	}{
		{"missing model", filepath.Join(dir, "missing.onnx"), true, "missing.onnx: cannot read: no such file or directory"},
		{"missing folder", filepath.Join(dir, "nowhere", "model.onnx"), true, "nowhere/model.onnx: cannot read"},
		{"missing external data", externalModel(t, t.TempDir(), "weights.bin"), true, `external data "weights.bin"`},
		{"not onnx", write(t, dir, "text.onnx", []byte("this is not a model\n")), false, "not a valid ONNX model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Load(tc.path)
			if err == nil {
				// External data is read on demand: the failure comes then.
				_, err = m.Graph.Value("w").Const.Raw()
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tc.notExist {
				t.Errorf("errors.Is(%v, fs.ErrNotExist) = %v, want %v", err, got, tc.notExist)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line containing %q", err, tc.want)
			}
		})
	}
}
