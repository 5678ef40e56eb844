package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/attnopt/attnopt/eval/ort"
	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// writeHugeModel writes, without holding it in memory, an attention block
// plus y = x + w with w an inline float32 initializer of n elements, as one
// protobuf (over 2 GiB for n > 2^29). w's raw_data is the file's tail, made
// by extending the file (sparse zeros).
func writeHugeModel(t *testing.T, path string, n int64) {
	t.Helper()
	b := testgraph.Attention(testgraph.Opts{B: 1, H: 2, N: 8, D: 4, Scale: "mul"})
	x := b.Input("x", graph.Float32, n)
	b.Output(b.Node("Add", []string{x, "w"}))
	mp := b.Proto()
	graphBytes, err := proto.Marshal(mp.Graph)
	if err != nil {
		t.Fatal(err)
	}
	mp.Graph = nil
	modelBytes, _ := proto.Marshal(mp)
	dt := int32(graph.Float32)
	tensor, _ := proto.Marshal(&onnxpb.TensorProto{Name: proto.String("w"), DataType: &dt, Dims: []int64{n}})
	raw := 4 * n
	tensor = protowire.AppendVarint(protowire.AppendTag(tensor, 9, protowire.BytesType), uint64(raw)) // raw_data header
	tensorLen := int64(len(tensor)) + raw
	initHdr := protowire.AppendVarint(protowire.AppendTag(nil, 5, protowire.BytesType), uint64(tensorLen)) // GraphProto.initializer
	graphLen := int64(len(graphBytes)+len(initHdr)) + tensorLen
	head := append(modelBytes, protowire.AppendVarint(protowire.AppendTag(nil, 7, protowire.BytesType), uint64(graphLen))...) // ModelProto.graph
	head = append(append(append(head, graphBytes...), initHdr...), tensor...)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(head)) + raw); err != nil {
		t.Fatal(err)
	}
}

// memAvailable is MemAvailable from /proc/meminfo in bytes (0 if unknown).
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestRewriteOver2GiB: a 2.25 GiB model (generated here, never in git)
// rewrites into a model file under 2 GiB plus OUT.data, the output says
// so, and ONNX Runtime creates a session from it when its library is found
// ($ONNXRUNTIME_LIB, as scripts/test.sh sets it).
func TestRewriteOver2GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2.25 GiB and needs about 8 GiB of memory")
	}
	dir := t.TempDir()
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) != nil || int64(fs.Bavail)*int64(fs.Bsize) < 6<<30 || memAvailable() < 10<<30 {
		t.Skip("needs 6 GiB of disk and 10 GiB of available memory")
	}
	const n = 9 << 26 // 2.25 GiB of float32
	in := filepath.Join(dir, "huge.onnx")
	writeHugeModel(t, in, n)
	outDir := filepath.Join(dir, "out")
	os.Mkdir(outDir, 0o755)
	out := filepath.Join(outDir, "huge.attnopt.onnx")
	// --target ort: stock ONNX Runtime can then load the output.
	code, stdout, stderr := runCLI("rewrite", in, "-o", out, "--target", "ort", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "over protobuf's 2 GiB limit") || !strings.Contains(stdout, "huge.attnopt.onnx.data") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	st, err := os.Stat(out)
	if err != nil || st.Size() >= graph.MaxProtoBytes {
		t.Fatalf("model file: %v, %d bytes", err, st.Size())
	}
	if st, err := os.Stat(out + ".data"); err != nil || st.Size() < 4*n {
		t.Fatalf("data file: %v", err)
	}
	lib, err := ort.FindLibrary("")
	if err != nil {
		t.Logf("ONNX Runtime not found (%v); checked the files only", err)
		return
	}
	rt, err := ort.Open(lib)
	if err != nil {
		t.Logf("ONNX Runtime did not open (%v); checked the files only", err)
		return
	}
	model, _ := os.ReadFile(out)
	// A model given as bytes finds its external data relative to the
	// working directory.
	t.Chdir(outDir)
	s, err := rt.NewSession(model, ort.SessionOptions{})
	if err != nil {
		t.Fatalf("ONNX Runtime cannot load the output: %v", err)
	}
	s.Close()
}
