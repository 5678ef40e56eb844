package main

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

// externalAttention writes a BERT-style attention block whose first
// projection weight lives in dir/data (external data) and returns the
// model's path.
func externalAttention(t *testing.T, dir, model, data string) string {
	t.Helper()
	mp := testgraph.HFSelfAttention(17, 1, 8, 16, 2).Proto()
	var init *onnxpb.TensorProto
	for _, x := range mp.Graph.Initializer {
		if len(x.Dims) == 2 {
			init = x
			break
		}
	}
	if err := os.WriteFile(filepath.Join(dir, data), init.RawData, 0o644); err != nil {
		t.Fatal(err)
	}
	init.RawData = nil
	init.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
	init.ExternalData = []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(data)}}
	b, _ := proto.Marshal(mp)
	p := filepath.Join(dir, model)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot maps every file under the dirs to a hash of its content and mode.
func snapshot(t *testing.T, dirs ...string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, _ := os.ReadFile(p)
			info, _ := e.Info()
			out[p] = sha256.Sum256(append(b, info.Mode().String()...))
			return nil
		})
	}
	return out
}

// TestRewriteTouchesOnlyItsOwnFiles: rewriting a model with external data
// into a folder that already holds another model's weights.bin creates or
// changes exactly OUT and OUT.data, both mode 0644, and the output loads.
func TestRewriteTouchesOnlyItsOwnFiles(t *testing.T) {
	in, outDir := t.TempDir(), t.TempDir()
	model := externalAttention(t, in, "model.onnx", "weights.bin")
	other := filepath.Join(outDir, "weights.bin")
	os.WriteFile(other, []byte("another model's weights"), 0o600)
	before := snapshot(t, in, outDir)
	out := filepath.Join(outDir, "fused.onnx")
	code, stdout, stderr := runCLI("rewrite", model, "-o", out, "--validate", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "external data [fused.onnx.data]: written beside the output into its own data file") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	after := snapshot(t, in, outDir)
	own := map[string]bool{out: true, out + ".data": true}
	for p, h := range after {
		if !own[p] && before[p] != h {
			t.Errorf("%s was created or modified", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		}
	}
	for p := range own {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v mode %v, want 0644", p, err, st.Mode().Perm())
		}
	}
	if _, err := graph.Load(out); err != nil {
		t.Fatal(err)
	}
}

// TestRewriteRefusesBadOutputs: each refusal exits 2 with one line, before
// any work (an unreadable model shows the check comes first) and without
// touching a file.
func TestRewriteRefusesBadOutputs(t *testing.T) {
	dir := t.TempDir()
	model := externalAttention(t, dir, "model.onnx", "w.onnx.data")
	garbage := filepath.Join(t.TempDir(), "garbage.onnx")
	os.WriteFile(garbage, []byte("not a model"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"-o a directory", []string{"rewrite", garbage, "-o", t.TempDir()}, "is a directory"},
		{"-o in a missing folder", []string{"rewrite", garbage, "-o", filepath.Join(dir, "missing", "out.onnx")}, "does not exist"},
		{"--report in a missing folder", []string{"rewrite", garbage, "--report", filepath.Join(dir, "missing", "r.md")}, "does not exist"},
		{"-o the input", []string{"rewrite", model, "-o", model}, "is the input"},
		{"-o the input's data file", []string{"rewrite", model, "-o", filepath.Join(dir, "w.onnx.data")}, "would overwrite " + filepath.Join(dir, "w.onnx.data")},
		{"output's data file is the input's", []string{"rewrite", model, "-o", filepath.Join(dir, "w.onnx")}, "the output's data file"},
		{"--report onto the input", []string{"rewrite", model, "--report", model + ".md", "-o", filepath.Join(t.TempDir(), "o.onnx")}, ""},
		{"--report onto the data", []string{"rewrite", model, "--report", filepath.Join(dir, "w.onnx.data"), "-o", filepath.Join(t.TempDir(), "o.onnx")}, "--report"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			code, _, stderr := runCLI(append(c.args, "--quiet")...)
			if c.want == "" { // a control: a report beside the input is fine
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				os.Remove(model + ".md")
				return
			}
			if code != exitBadInput || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
			after := snapshot(t, dir)
			for p, h := range after {
				if before[p] != h {
					t.Errorf("%s was created or modified", p)
				}
			}
		})
	}
}

// TestSIGTERMRemovesTemporaryFiles interrupts the real binary while it
// copies 512 MiB of external data: exit 143 and no file left in the output
// folder.
func TestSIGTERMRemovesTemporaryFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and writes 512 MiB")
	}
	bin := filepath.Join(t.TempDir(), "attnopt")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	in, outDir := t.TempDir(), t.TempDir()
	const n = 128 << 20 // float32s
	b := testgraph.New(17)
	x := b.Input("x", graph.Float32, n)
	b.Output(b.Node("Add", []string{x, "w"}))
	mp := b.Proto()
	dt := int32(graph.Float32)
	mp.Graph.Initializer = append(mp.Graph.Initializer, &onnxpb.TensorProto{Name: proto.String("w"), DataType: &dt, Dims: []int64{n},
		DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
		ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}})
	if err := os.Truncate(filepath.Join(in, "w.bin"), 0); err != nil {
		os.WriteFile(filepath.Join(in, "w.bin"), nil, 0o644)
	}
	if err := os.Truncate(filepath.Join(in, "w.bin"), 4*n); err != nil {
		t.Fatal(err)
	}
	data, _ := proto.Marshal(mp)
	model := filepath.Join(in, "big.onnx")
	os.WriteFile(model, data, 0o644)
	cmd := exec.Command(bin, "rewrite", model, "-o", filepath.Join(outDir, "out.onnx"), "--quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(outDir)
		if len(entries) > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code == 0 {
		t.Skipf("the rewrite finished before the signal (%v)", err)
	}
	if code != 143 {
		t.Fatalf("exit %d (%v), want 143", code, err)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

// A Constant whose tensor is external can be referenced in place, but not
// carried to another folder: refused before any work, naming the input.
func TestRewriteRefusesNestedExternalElsewhere(t *testing.T) {
	dir := t.TempDir()
	b := testgraph.New(17)
	x := b.Input("x", graph.Float32, 4)
	dt := int32(graph.Float32)
	os.WriteFile(filepath.Join(dir, "c.bin"), make([]byte, 16), 0o644)
	c := b.Node("Constant", nil, &onnxpb.AttributeProto{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(),
		T: &onnxpb.TensorProto{DataType: &dt, Dims: []int64{4}, DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
			ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("c.bin")}}}})
	b.Output(b.Node("Add", []string{x, c}))
	model := filepath.Join(dir, "model.onnx")
	os.WriteFile(model, b.Bytes(), 0o644)
	code, _, stderr := runCLI("rewrite", model, "-o", filepath.Join(t.TempDir(), "o.onnx"), "--quiet")
	if code != exitBadInput || !strings.HasPrefix(stderr, "attnopt: "+model+": a tensor outside the graph's initializers") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI("rewrite", model, "--quiet"); code != 0 {
		t.Fatalf("beside the input: exit %d: %s", code, stderr)
	}
}
