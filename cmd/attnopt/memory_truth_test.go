package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/graph"
	"github.com/attnopt/attnopt/internal/testgraph"
)

// Reports state the memory the chosen target's runtime really needs: ONNX
// Runtime's CPU MultiHeadAttention with an attention_bias or unidirectional
// and its Attention kernel materialise the scores, so those rewrites say
// "still", warn naming the attnopt target, and the diff counts the scores
// after; the memory-efficient cases (attnopt target, unmasked MHA) do not
// warn.
func TestRewriteMemoryTruthPerTarget(t *testing.T) {
	masked := testgraph.SDPABoolMask(23, graph.Float32, 1, 4, 16, 4)
	unmasked := testgraph.Attention(testgraph.Opts{B: 1, H: 4, N: 16, D: 8, Opset: 23})
	causal := testgraph.Attention(testgraph.Opts{B: 1, H: 4, N: 16, D: 8, Opset: 23, Mask: "causal"})
	cases := []struct {
		name   string
		b      *testgraph.B
		target string
		warn   bool
	}{
		{"masked/ort", masked, "ort", true},
		{"masked/onnx", masked, "onnx", true},
		{"masked/attnopt", masked, "attnopt", false},
		{"unmasked/ort", unmasked, "ort", false},
		// MultiHeadAttention with unidirectional holds the scores too
		// (passes/lower/ort.go: measured peak RSS); 1.32's GroupQueryAttention
		// does not (gqa.go).
		{"causal/ort", causal, "ort", true},
		{"causal/gqa", causal, "gqa", false},
		{"causal/attnopt", causal, "attnopt", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := writeModel(t, tc.b)
			out := filepath.Join(filepath.Dir(in), "out.onnx")
			code, stdout, stderr := runCLI("rewrite", in, "-o", out, "--target", tc.target, "--min-scores", "0")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			warned := strings.Contains(stdout, "warning: site 0") && strings.Contains(stdout, "--target attnopt (attnopt.FlashAttention)") &&
				strings.Contains(stdout, "scores 4.0 KiB → still 4.0 KiB")
			if warned != tc.warn || strings.Contains(stdout, "warning") != tc.warn {
				t.Fatalf("warning %v, want %v:\n%s", warned, tc.warn, stdout)
			}
			// A plain causal prompt GroupQueryAttention takes: the warning
			// names stock ORT's own op for it too.
			if gqa := strings.Contains(stdout, "nor does --target gqa"); gqa != (tc.name == "causal/ort") {
				t.Fatalf("warning names --target gqa: %v:\n%s", gqa, stdout)
			}
			code, js, stderr := runCLI("diff", in, out, "--format", "json")
			if code != 0 {
				t.Fatalf("diff exit %d: %s", code, stderr)
			}
			var rep struct {
				Sites []struct {
					Status      string `json:"status"`
					BytesBefore *int64 `json:"bytes_before"`
					BytesAfter  *int64 `json:"bytes_after"`
				} `json:"sites"`
				Added []json.RawMessage `json:"new_sites"`
			}
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Sites) != 1 || rep.Sites[0].BytesAfter == nil || rep.Sites[0].BytesBefore == nil {
				t.Fatalf("diff sites: %s", js)
			}
			same := *rep.Sites[0].BytesAfter == *rep.Sites[0].BytesBefore
			if same != tc.warn || rep.Sites[0].Status != "fused" || len(rep.Added) != 0 {
				t.Fatalf("diff: status %s, bytes %d → %d, %d added; want the scores counted after: %v", rep.Sites[0].Status,
					*rep.Sites[0].BytesBefore, *rep.Sites[0].BytesAfter, len(rep.Added), tc.warn)
			}
		})
	}
}

// A dynamo opset-23 export holds ONNX Attention, which ONNX Runtime's CPU
// kernel runs by materialising the scores: inspect lists it as a lifted
// site, check counts its scores against the budget, and the attnopt rewrite
// passes the same gate.
func TestLiftedAttentionInspectCheckRewrite(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "models", "sdpa_h8d8_dynamo_op23", "model.onnx")
	code, stdout, _ := runCLI("inspect", in)
	if code != 0 || !strings.Contains(stdout, "1 attention site(s)") ||
		!strings.Contains(stdout, "lifted from ai.onnx.Attention (rank4/scale-default/mask-bool)") {
		t.Fatalf("inspect exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = runCLI("check", in, "--memory-budget", "100KiB")
	if code != 1 || !strings.Contains(stdout, "128.0 KiB") {
		t.Fatalf("check of the original: exit %d, want 1 naming the 128 KiB scores:\n%s", code, stdout)
	}
	out := filepath.Join(t.TempDir(), "out.onnx")
	if code, stdout, stderr := runCLI("rewrite", in, "-o", out, "--min-scores", "0"); code != 0 || !strings.Contains(stdout, "fused into attnopt.FlashAttention") {
		t.Fatalf("rewrite exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, _ = runCLI("check", out, "--memory-budget", "100KiB"); code != 0 {
		t.Fatalf("check of the rewrite: exit %d:\n%s", code, stdout)
	}
}

// The same truth for ONNX Runtime's CUDA EP (passes/lower/cuda.go): inspect
// advises --target ort where ORT's MultiHeadAttention runs a memory-efficient
// kernel on CUDA and --target attnopt where it would be unfused (head dim 4,
// the seed case); a --target ort rewrite of such a site says so, one of an
// unmasked d 8 site does not; the JSON carries the kernel.
func TestCUDAMemoryTruth(t *testing.T) {
	seed := testgraph.SDPABoolMask(17, graph.Float16, 1, 4, 16, 4)
	d8 := testgraph.Attention(testgraph.Opts{B: 1, H: 4, N: 16, D: 8, DType: graph.Float16})
	cases := []struct {
		name    string
		b       *testgraph.B
		advice  string
		kernel  string // MultiHeadAttention's on CUDA
		ortNote bool   // --target ort's rewrite notes the unfused CUDA kernel
	}{
		{"seed d4 bool mask", seed, "site 0 on ONNX Runtime's CUDA EP: --target attnopt (ORT's MultiHeadAttention would run unfused there: head dim 4 is not a multiple of 8)", "unfused", true},
		{"d8 unmasked", d8, "site 0 on ONNX Runtime's CUDA EP: --target ort (its MultiHeadAttention runs the flash kernel", "flash", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := writeModel(t, tc.b)
			code, stdout, stderr := runCLI("inspect", in)
			if code != 0 || !strings.Contains(stdout, tc.advice) {
				t.Fatalf("inspect exit %d, want %q:\n%s%s", code, tc.advice, stdout, stderr)
			}
			code, js, _ := runCLI("inspect", in, "--json")
			var rep struct {
				Sites []struct {
					CUDA struct {
						Kernel       string `json:"kernel"`
						Materialises bool   `json:"materialises"`
						Recommended  string `json:"recommended_target"`
					} `json:"cuda"`
				} `json:"sites"`
			}
			if err := json.Unmarshal([]byte(js), &rep); code != 0 || err != nil || len(rep.Sites) != 1 {
				t.Fatalf("inspect --json exit %d, %v:\n%s", code, err, js)
			}
			if c := rep.Sites[0].CUDA; c.Kernel != tc.kernel || c.Materialises != tc.ortNote || (c.Recommended == "ort") == tc.ortNote {
				t.Fatalf("cuda %+v, want kernel %s", c, tc.kernel)
			}
			for _, target := range []string{"ort", "attnopt"} {
				out := filepath.Join(t.TempDir(), "out.onnx")
				code, stdout, stderr := runCLI("rewrite", in, "-o", out, "--target", target, "--min-scores", "0")
				if code != 0 {
					t.Fatalf("rewrite --target %s exit %d: %s", target, code, stderr)
				}
				noted := strings.Contains(stdout, "on ONNX Runtime's CUDA EP com.microsoft.MultiHeadAttention runs its unfused kernel, which materialises the scores (head dim 4 is not a multiple of 8); --target attnopt runs attnopt.FlashAttention's CUDA kernel")
				if noted != (tc.ortNote && target == "ort") || (target == "attnopt" && strings.Contains(stdout, "CUDA EP")) {
					t.Fatalf("rewrite --target %s: CUDA note %v:\n%s", target, noted, stdout)
				}
			}
		})
	}
}
