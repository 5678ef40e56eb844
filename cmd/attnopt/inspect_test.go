package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

func runCLI(args ...string) (int, string, string) {
	var out bytes.Buffer
	var errb lockedBuffer // the progress heartbeat writes from its own goroutine
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func writeModel(t *testing.T, b *testgraph.B) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInspectJSONSeedCases(t *testing.T) {
	cases := []struct {
		name  string
		model *testgraph.B
		want  map[string]any
	}{
		{"CPA3D", testgraph.CPA3D(17, 128, 128, 128, 128, 4), map[string]any{
			"heads": 4.0, "q_len": 2097152.0, "kv_len": 2097152.0, "head_dim": 32.0, "v_head_dim": 32.0,
			"dtype": "float32", "mask": "none", "score_bytes": 70368744177664.0}},
		{"SAGAN", testgraph.SAGAN(17, 64, 256, 256), map[string]any{
			"heads": 1.0, "q_len": 65536.0, "head_dim": 8.0, "v_head_dim": 64.0, "scale": 1.0,
			"score_bytes": 17179869184.0}},
		{"SDPA", testgraph.SDPABoolMask(17, graph.Float16, 1, 16, 10000, 4), map[string]any{
			"heads": 16.0, "head_dim": 4.0, "dtype": "float16", "mask": "bool",
			"mask_shape": []any{1.0, 1.0, 10000.0, 10000.0}, "score_bytes": 3200000000.0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeModel(t, tc.model)
			code, stdout, stderr := runCLI("inspect", path, "--json")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var rep struct {
				Model  string           `json:"model"`
				Opsets map[string]int64 `json:"opsets"`
				Sites  []map[string]any `json:"sites"`
				Fused  []any            `json:"fused"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			if rep.Model != path || rep.Opsets["ai.onnx"] != 17 || rep.Fused == nil || len(rep.Sites) != 1 {
				t.Fatalf("report header wrong: %+v", rep)
			}
			site := rep.Sites[0]
			for _, f := range []string{"id", "nodes", "q", "k", "v", "output", "batch", "heads", "q_len", "kv_len", "head_dim", "v_head_dim", "dtype", "mask", "mask_shape", "scale", "score_bytes", "fused_bytes"} {
				if _, ok := site[f]; !ok {
					t.Errorf("site lacks field %q", f)
				}
			}
			for k, v := range tc.want {
				got, _ := json.Marshal(site[k])
				want, _ := json.Marshal(v)
				if string(got) != string(want) {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
		})
	}
}

func TestInspectTextAndExplain(t *testing.T) {
	path := writeModel(t, testgraph.Classifier())
	code, stdout, _ := runCLI("inspect", path, "--explain")
	if code != 0 || !strings.Contains(stdout, "0 attention site(s)") || !strings.Contains(stdout, "not a site: Softmax") {
		t.Fatalf("exit %d, output:\n%s", code, stdout)
	}
	path = writeModel(t, testgraph.SAGAN(17, 64, 256, 256))
	_, stdout, _ = runCLI("inspect", path)
	for _, want := range []string{"65536", "16.0 GiB", "float32", "none"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestInspectPins(t *testing.T) {
	path := writeModel(t, testgraph.HFSelfAttention(17, "batch", "seq", 64, 4))
	_, stdout, _ := runCLI("inspect", path, "--json")
	if !strings.Contains(stdout, `"score_bytes": null`) {
		t.Fatalf("symbolic model should have null score_bytes:\n%s", stdout)
	}
	code, stdout, stderr := runCLI("inspect", path, "--json", "--dim", "batch=2", "--dim", "seq=128")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 2·4·128·128·4 bytes
	if !strings.Contains(stdout, `"score_bytes": 524288`) {
		t.Fatalf("pinned score bytes missing:\n%s", stdout)
	}
	code, _, stderr = runCLI("inspect", path, "--dim", "nosuch=3")
	if code != 2 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("unknown dim: exit %d, %q", code, stderr)
	}
}

func TestExitCodesForBadInput(t *testing.T) {
	dir := t.TempDir()
	notOnnx := filepath.Join(dir, "readme.onnx")
	os.WriteFile(notOnnx, []byte("hello\n"), 0o644)
	valid := testgraph.SAGAN(17, 16, 4, 4).Bytes()
	trunc := filepath.Join(dir, "trunc.onnx")
	os.WriteFile(trunc, valid[:len(valid)/3], 0o644)
	cases := [][]string{
		{"inspect", notOnnx},
		{"inspect", trunc},
		{"inspect", filepath.Join(dir, "missing.onnx")},
		{"inspect"},
		{"inspect", notOnnx, "--no-such-flag"},
		{"inspect", notOnnx, "--shape", "x=1xbad"},
		{"no-such-command"},
		{"inspct"}, // cobra writes its suggestion on lines of their own
	}
	for _, args := range cases {
		code, stdout, stderr := runCLI(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || !strings.HasPrefix(stderr, "attnopt: ") {
			t.Errorf("%v: stderr should be one line, got %q", args, stderr)
		}
		if strings.Contains(stdout+stderr, "goroutine") {
			t.Errorf("%v: panicked", args)
		}
	}
}
