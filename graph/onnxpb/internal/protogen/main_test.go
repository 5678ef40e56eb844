package main

import (
	"os"
	"path/filepath"
	"testing"
)

// `go generate ./graph/onnxpb` must reproduce the committed onnx.pb.go.
func TestGeneratedFileIsUpToDate(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	out := filepath.Join(t.TempDir(), "onnx.pb.go")
	if err := run("onnx.proto", out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, err := os.ReadFile("onnx.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("onnx.pb.go is stale: run go generate ./graph/onnxpb")
	}
}
