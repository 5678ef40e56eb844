package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/graph/onnxpb"
	"github.com/attnopt/attnopt/internal/testgraph"
	"google.golang.org/protobuf/proto"
)

func TestRewriteWritesBesideInputAndNeverTouchesIt(t *testing.T) {
	for _, target := range []string{"attnopt", "ort"} {
		t.Run(target, func(t *testing.T) {
			in := writeModel(t, testgraph.HFSelfAttention(17, "batch", "seq", 32, 4))
			before, _ := os.ReadFile(in)
			code, stdout, stderr := runCLI("rewrite", in, "--target", target, "--verify-each")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			out := strings.TrimSuffix(in, ".onnx") + ".attnopt.onnx"
			if !strings.Contains(stdout, "1 of 1 site(s) fused") || !strings.Contains(stdout, out) {
				t.Fatalf("unexpected output:\n%s", stdout)
			}
			after, _ := os.ReadFile(in)
			if !bytes.Equal(before, after) {
				t.Fatal("the input file changed")
			}
			first, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			// Same input and flags: byte-identical output.
			if code, _, stderr := runCLI("rewrite", in, "--target", target); code != 0 {
				t.Fatal(stderr)
			}
			second, _ := os.ReadFile(out)
			if !bytes.Equal(first, second) {
				t.Fatal("two runs wrote different bytes")
			}
			code, stdout, _ = runCLI("inspect", out)
			// The masked site under --target ort becomes MultiHeadAttention
			// with an attention_bias, whose ORT CPU kernel still materialises
			// the scores: inspect lists it as a site lifted from that op.
			want := "0 attention site(s), 1 already fused"
			if target == "ort" {
				want = "lifted from com.microsoft.MultiHeadAttention"
			}
			if code != 0 || !strings.Contains(stdout, want) {
				t.Fatalf("inspect of the rewrite:\n%s", stdout)
			}
			entries, _ := os.ReadDir(filepath.Dir(in))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") {
					t.Errorf("temporary file left behind: %s", e.Name())
				}
			}
		})
	}
}

// A rewrite that fuses nothing writes no file beside the input and says
// so, exit 0; with -o the file is written as asked, the model unchanged
// (docs/cli.md, "Nothing to rewrite"). Reports given with --report are
// written either way and name no output.
func TestRewriteWithNothingToFuse(t *testing.T) {
	cases := []struct {
		name   string
		model  *testgraph.B
		flags  []string
		output bool // give -o
		last   string
	}{
		{"no site", testgraph.Classifier(), nil, false, "no attention site found; nothing to rewrite, no file written (-o FILE writes the model unchanged)"},
		{"no site, -o", testgraph.Classifier(), nil, true, "no attention site found; wrote the model unchanged to "},
		{"sites below --min-scores", testgraph.SAGAN(17, 16, 4, 4), []string{"--min-scores", "1GiB"}, false, "0 of 1 site(s) fused (target attnopt): nothing to rewrite, no file written (-o FILE writes the model unchanged)"},
		{"sites below --min-scores, -o", testgraph.SAGAN(17, 16, 4, 4), []string{"--min-scores", "1GiB"}, true, "0 of 1 site(s) fused (target attnopt); 0 node(s) removed, 0 layout fold(s); wrote "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "model.onnx")
			if err := os.WriteFile(in, tc.model.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"rewrite", in, "--report", filepath.Join(dir, "r.json")}, tc.flags...)
			want := []string{"model.onnx", "r.json"}
			if tc.output {
				args = append(args, "-o", filepath.Join(dir, "out.onnx"))
				want = []string{"model.onnx", "out.onnx", "r.json"}
			}
			code, stdout, stderr := runCLI(args...)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if code != 0 || stderr != "" || len(lines) < 2 || !strings.Contains(lines[len(lines)-2], tc.last) {
				t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant the summary %q", code, stderr, stdout, tc.last)
			}
			var files []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				files = append(files, e.Name())
			}
			if !slices.Equal(files, want) {
				t.Errorf("files %v, want %v", files, want)
			}
			rep, err := os.ReadFile(filepath.Join(dir, "r.json"))
			if err != nil {
				t.Fatal(err)
			}
			if named := strings.Contains(string(rep), "out.onnx") || strings.Contains(string(rep), "model.attnopt.onnx"); named != tc.output {
				t.Errorf("report names an output: %v, want %v", named, tc.output)
			}
			if !tc.output {
				return
			}
			a, _ := os.ReadFile(in)
			b, _ := os.ReadFile(filepath.Join(dir, "out.onnx"))
			var pa, pb onnxpb.ModelProto
			proto.Unmarshal(a, &pa)
			proto.Unmarshal(b, &pb)
			if !proto.Equal(&pa, &pb) {
				t.Fatal("a model with nothing to fuse changed")
			}
		})
	}
}

func TestRewriteCarriesExternalData(t *testing.T) {
	dir := t.TempDir()
	b := testgraph.SAGAN(17, 16, 4, 4)
	mp := b.Proto()
	// Move the first weight to an external file.
	w := mp.Graph.Initializer[0]
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), w.RawData, 0o644); err != nil {
		t.Fatal(err)
	}
	w.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
	w.ExternalData = []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("weights.bin")}}
	w.RawData = nil
	data, _ := proto.Marshal(mp)
	in := filepath.Join(dir, "model.onnx")
	os.WriteFile(in, data, 0o644)
	outDir := t.TempDir()
	code, stdout, stderr := runCLI("rewrite", in, "-o", filepath.Join(outDir, "fused.onnx"))
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "external data [fused.onnx.data]: written beside the output into its own data file") {
		t.Fatalf("output does not say how external data was carried:\n%s", stdout)
	}
	m, err := graph.Load(filepath.Join(outDir, "fused.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Graph.Inits {
		if _, err := v.Const.Raw(); err != nil {
			t.Fatalf("initializer %s unreadable in the output: %v", v.Name, err)
		}
	}
	// The site is fused (--min-scores 0): a rewrite that fuses nothing
	// writes no file beside the input.
	code, stdout, _ = runCLI("rewrite", in, "--min-scores", "0")
	if code != 0 || !strings.Contains(stdout, "referenced in place") {
		t.Fatalf("rewrite beside the input:\n%s", stdout)
	}
}
