package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnopt/attnopt/eval/ort"
)

// noLibraries makes the runtime search find nothing it is not given: no
// variable, no Python on PATH, and a working directory outside the
// checkout (whose .cache/ort and kernels/build it would find).
func noLibraries(t *testing.T) {
	t.Helper()
	for _, v := range []string{runtimeEnv, "ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH"} {
		t.Setenv(v, "")
	}
	t.Setenv("PATH", t.TempDir())
	t.Chdir(t.TempDir())
}

// validate defaults to ONNX Runtime with attnopt's custom-op library when
// it finds them, says which it used, and falls back to the Go runtime,
// saying why, when it does not; --runtime ort without a library is a
// setup error (exit 2) whose hint a user outside the repository can act on.
func TestValidateDefaultRuntime(t *testing.T) {
	orig, attnoptOut := rewritten(t, "sagan")
	ortOut := filepath.Join(t.TempDir(), "sagan.ort.onnx")
	if code, _, stderr := runCLI("rewrite", orig, "-o", ortOut, "--target", "ort"); code != 0 {
		t.Fatal(stderr)
	}
	orig, _ = filepath.Abs(orig)
	lib, libErr := ort.FindLibrary("") // before noLibraries hides it
	ops, opsErr := ort.CustomOpsLibrary("")
	noLibraries(t)

	code, stdout, stderr := runCLI("validate", orig, attnoptOut)
	if code != 0 || !strings.HasPrefix(stdout, "runtime: attnopt's pure-Go reference runtime (no ONNX Runtime found: pip install onnxruntime, or set ORT_LIB)\nvalidate ") {
		t.Errorf("nothing installed: exit %d %s\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runCLI("validate", orig, attnoptOut, "--runtime", "ort")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "pip install onnxruntime") || strings.Contains(stderr, "scripts/") {
		t.Errorf("--runtime ort without ONNX Runtime: exit %d, stderr %q", code, stderr)
	}
	t.Setenv(runtimeEnv, "go")
	if code, stdout, _ = runCLI("validate", orig, attnoptOut); code != 0 || !strings.HasPrefix(stdout, "runtime: attnopt's pure-Go reference runtime ($ATTNOPT_RUNTIME=go)\n") {
		t.Errorf("$ATTNOPT_RUNTIME=go: %s", stdout)
	}
	t.Setenv(runtimeEnv, "")

	if libErr != nil {
		t.Skipf("ONNX Runtime not found here (%v): the ort half of the test needs it", libErr)
	}
	t.Setenv("ORT_LIB", lib)
	// The ort target needs no custom ops: ONNX Runtime runs it.
	code, stdout, stderr = runCLI("validate", orig, ortOut)
	if code != 0 || !strings.HasPrefix(stdout, "runtime: ONNX Runtime 1.") || !strings.Contains(stdout, " from $ORT_LIB: "+lib+"\n") || !strings.Contains(stdout, "(runtime ort,") {
		t.Errorf("ort target: exit %d %s\n%s", code, stderr, stdout)
	}
	// attnopt ops without the custom-op library: the Go runtime, saying why.
	code, stdout, _ = runCLI("validate", orig, attnoptOut)
	if code != 0 || !strings.Contains(stdout, "pure-Go reference runtime (the model has attnopt ops and attnopt's custom-op library was not found") {
		t.Errorf("attnopt target, no custom ops: exit %d\n%s", code, stdout)
	}
	if opsErr != nil {
		t.Skipf("custom-op library not built here (%v)", opsErr)
	}
	t.Setenv("ATTNOPT_CUSTOM_OPS", ops)
	code, stdout, stderr = runCLI("validate", orig, attnoptOut, "--json")
	var doc struct {
		Runtime    string `json:"runtime"`
		Pass       bool   `json:"pass"`
		Provenance struct {
			Runtime struct {
				Name, Library, Version string
				CustomOps              string `json:"custom_ops"`
				CustomOpsFrom          string `json:"custom_ops_from"`
			} `json:"runtime"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d %s: %v\n%s", code, stderr, err, stdout)
	}
	// Documents carry the libraries' file names (they are outside the
	// working directory), not this machine's paths.
	rt := doc.Provenance.Runtime
	if doc.Runtime != "ort" || !doc.Pass || rt.Name != "ort" || rt.Library != filepath.Base(lib) || !strings.HasPrefix(rt.Version, "1.") || rt.CustomOps != filepath.Base(ops) || rt.CustomOpsFrom != "$ATTNOPT_CUSTOM_OPS" {
		t.Errorf("attnopt target in ONNX Runtime: %+v", doc)
	}
	// rewrite --validate takes the same default and says so, with the
	// paths on the terminal; its reports name the files only.
	dir := t.TempDir()
	code, stdout, _ = runCLI("rewrite", orig, "-o", filepath.Join(dir, "v.onnx"), "--validate", "--report", filepath.Join(dir, "r.html"), "--report", filepath.Join(dir, "r.json"))
	if code != 0 || !strings.Contains(stdout, "\nruntime: ONNX Runtime 1.") || !strings.Contains(stdout, "; attnopt's custom ops from $ATTNOPT_CUSTOM_OPS: "+ops+"\n") {
		t.Errorf("rewrite --validate: exit %d\n%s", code, stdout)
	}
	for _, r := range []string{"r.html", "r.json"} {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(data); strings.Contains(s, filepath.Dir(lib)) || strings.Contains(s, filepath.Dir(ops)) || !strings.Contains(s, filepath.Base(ops)) {
			t.Errorf("%s names the libraries' folders %s, %s, or not %s", r, filepath.Dir(lib), filepath.Dir(ops), filepath.Base(ops))
		}
	}
}
