package graph_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A save whose final rename fails (the path is a directory) leaves no
// temporary file.
func TestSaveFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.onnx")
	os.Mkdir(target, 0o755)
	m := testgraph.SAGAN(17, 16, 4, 4).Model()
	if _, err := m.Save(target); err == nil {
		t.Fatal("saving onto a directory succeeded")
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("left behind: %v", got)
	}
}

// Temporary files of a process killed mid-write (SIGKILL cannot be caught)
// are removed by the next save into the folder; a live process's are kept.
func TestSaveRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(dir, fmt.Sprintf(".attnopt-tmp-%d-123", dead.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf(".attnopt-tmp-%d-456", 1))
	os.WriteFile(stale, []byte("half a model"), 0o644)
	os.WriteFile(live, []byte("someone else's"), 0o644)
	if _, err := testgraph.SAGAN(17, 16, 4, 4).Model().Save(filepath.Join(dir, "out.onnx")); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(entries(t, dir), " ")
	if strings.Contains(got, "-123") || !strings.Contains(got, "-456") {
		t.Fatalf("folder holds %s", got)
	}
}

// RemoveTempFiles (the signal handler's) deletes what a save has open and
// makes later temporary files fail.
func TestRemoveTempFiles(t *testing.T) {
	dir := t.TempDir()
	t.Cleanup(graph.ResetTemps)
	graph.RemoveTempFiles()
	err := graph.WriteFileAtomic(filepath.Join(dir, "x"), []byte("x"))
	if err == nil || len(entries(t, dir)) != 0 {
		t.Fatalf("write after RemoveTempFiles: %v, folder %v", err, entries(t, dir))
	}
}

// A model over the protobuf limit is written with its initializers of 1 KiB
// and more in OUT.data (here with a 4 KiB limit standing in for 2 GiB); the
// output reloads with the same values.
func TestSaveOverLimitGoesExternal(t *testing.T) {
	m := testgraph.HFSelfAttention(17, 1, 8, 32, 4).Model()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.onnx")
	res, err := m.SaveWith(out, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Externalized || res.DataFile != "out.onnx.data" {
		t.Fatalf("result %+v", res)
	}
	if st, _ := os.Stat(out); st.Size() > 4096 {
		t.Fatalf("model file is %d bytes", st.Size())
	}
	back, err := graph.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, v := range m.Graph.Inits {
		w := back.Graph.Value(v.Name).Const
		if w.IsExternal() {
			moved++
		}
		if !v.Const.Equal(w) {
			t.Errorf("initializer %s differs after the round trip", v.Name)
		}
	}
	if moved == 0 {
		t.Fatal("no initializer moved to external data")
	}
}

// The final structural check runs before anything is written.
func TestSaveRefusesBrokenGraph(t *testing.T) {
	m := testgraph.SAGAN(17, 16, 4, 4).Model()
	g := m.Graph
	g.RemoveNode(g.Nodes[0]) // its output is still read
	dir := t.TempDir()
	if _, err := m.Save(filepath.Join(dir, "out.onnx")); err == nil || !strings.Contains(err.Error(), "final structural check") {
		t.Fatalf("err = %v", err)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Fatalf("written: %v", got)
	}
}

// The streamed file is the same message proto.Marshal would write, and
// loading it (mapped, raw_data aliased) gives the same message again.
func TestStreamedSaveIsTheSameMessage(t *testing.T) {
	for _, b := range []*testgraph.B{testgraph.SAGAN(17, 16, 4, 4), testgraph.HFSelfAttention(17, "batch", "seq", 32, 4), testgraph.Transformer(2, 64, 4, "seq"), testgraph.Transformer(1, 1024, 8, "seq") /* over mmapMin: mapped */} {
		m := b.Model()
		want, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "m.onnx")
		if _, err := m.Save(out); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		var a, c onnxpb.ModelProto
		if err := proto.Unmarshal(want, &a); err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(got, &c); err != nil {
			t.Fatalf("streamed file does not parse: %v", err)
		}
		if !proto.Equal(&a, &c) {
			t.Fatal("streamed file differs from proto.Marshal's message")
		}
		back, err := graph.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := back.Marshal()
		var d onnxpb.ModelProto
		proto.Unmarshal(again, &d)
		if !proto.Equal(&a, &d) {
			t.Fatal("reloading changed the message")
		}
	}
}
