package graph_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
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
