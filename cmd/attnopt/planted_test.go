package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// plantedPaths are where the library search used to look in the working
// directory and its parents (eval/ort/find.go, find_python.go): ONNX
// Runtime from .cache/ort (scripts/setup-ort.sh), the custom ops from
// kernels/build, and ./onnxruntime/ found by a python3 with the working
// directory on sys.path; and the CUDA driver's name, which an empty
// $LD_LIBRARY_PATH entry (set below) makes the loader look for here.
var plantedPaths = []string{
	".cache/ort/9.9.9/libonnxruntime.so.1",
	"kernels/build/libattnopt_ort.so",
	"onnxruntime/capi/libonnxruntime.so.1",
	"libcuda.so.1",
}

// plantedLibrary builds a harmless shared library whose constructor creates
// the file $ATTNOPT_PLANT_MARKER: loading it leaves the marker.
func plantedLibrary(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the planted-library test needs it to build a shared library")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "plant.c")
	code := `#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
  const char *p = getenv("ATTNOPT_PLANT_MARKER");
  FILE *f = p ? fopen(p, "w") : NULL;
  if (f) fclose(f);
}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "plant.so")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Skipf("gcc cannot build a shared library here: %v\n%s", err, out)
	}
	return lib
}

// dlopened are the files the binary itself dlopened, from LD_DEBUG=files.
var dlopened = regexp.MustCompile(`file=(\S+) \[\d+\];\s+dynamically loaded by (\S+)`)

// TestPlantedLibrariesNeverLoad (issue 34): a library planted in the
// working directory, and two folders above it, where the search used to
// look is never loaded by version, inspect or validate --runtime auto; each
// library the binary does dlopen was announced first ("attnopt: loading").
// With $ATTNOPT_DEV=1 the same plant is found, announced, and loads, which
// shows the plant is where the old search looked.
func TestPlantedLibrariesNeverLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	plant := plantedLibrary(t)
	data, err := os.ReadFile(plant)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "attnopt")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	orig, _ := filepath.Abs("../../testdata/models/sagan/model.onnx")
	rew := filepath.Join(t.TempDir(), "sagan.attnopt.onnx")
	if out, err := exec.Command(bin, "rewrite", orig, "-o", rew).CombinedOutput(); err != nil {
		t.Fatalf("rewrite: %v\n%s", err, out)
	}

	top := t.TempDir()
	work := filepath.Join(top, "a", "b")
	for _, root := range []string{top, work} {
		for _, p := range plantedPaths {
			dst := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	marker := filepath.Join(t.TempDir(), "loaded")
	// LD_LIBRARY_PATH's empty first entry is the working directory to the
	// loader: "export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/x" with it unset.
	env := []string{"ATTNOPT_PLANT_MARKER=" + marker, "LD_DEBUG=files", "HOME=" + t.TempDir(), "LD_LIBRARY_PATH=:" + t.TempDir()}
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "ATTNOPT_DEV", "ATTNOPT_RUNTIME", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "LD_DEBUG":
		default:
			env = append(env, kv)
		}
	}
	runIn := func(env []string, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = work, env
		out, _ := cmd.CombinedOutput() // validate may fall back or fail; only what loads matters
		return string(out)
	}
	cmds := [][]string{{"version"}, {"version", "--json"}, {"inspect", orig}, {"validate", orig, rew, "--runtime", "auto"}}
	for _, args := range cmds {
		out := runIn(env, args...)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%v loaded a planted library:\n%s", args, out)
		}
		checkAnnounced(t, args, bin, out)
	}

	// A real ONNX Runtime, when the test has one ($ONNXRUNTIME_LIB, as
	// scripts/test.sh sets): version loads it, announced first, and nothing
	// else.
	if lib := os.Getenv("ONNXRUNTIME_LIB"); lib != "" {
		out := runIn(append(env, "ONNXRUNTIME_LIB="+lib), "version")
		if !dlopened.MatchString(out) {
			t.Logf("no dlopen seen in LD_DEBUG output (a static binary?):\n%s", out)
		}
		checkAnnounced(t, []string{"version", "$ONNXRUNTIME_LIB"}, bin, out)
	}

	// The control: development mode searches the folders above and says so.
	out := runIn(append(env, "ATTNOPT_DEV=1"), "version")
	checkAnnounced(t, []string{"version", "$ATTNOPT_DEV=1"}, bin, out)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("$ATTNOPT_DEV=1 did not find the plant (the test plants in the wrong place?):\n%s", out)
	}
	want := "attnopt: loading ONNX Runtime " + filepath.Join(work, plantedPaths[0]) + " (from this checkout's .cache/ort, development mode ($ATTNOPT_DEV=1))"
	if !strings.Contains(out, "attnopt: development mode ($ATTNOPT_DEV=1)") || !strings.Contains(out, want) {
		t.Errorf("development mode: want its notice and %q in:\n%s", want, out)
	}
}

// checkAnnounced: every file bin itself dlopened (LD_DEBUG=files lines in
// out) was named in an "attnopt: loading" line printed before it.
func checkAnnounced(t *testing.T, args []string, bin, out string) {
	t.Helper()
	for _, m := range dlopened.FindAllStringSubmatchIndex(out, -1) {
		file, by := out[m[2]:m[3]], out[m[4]:m[5]]
		if by != bin {
			continue // loaded by a library (ONNX Runtime's own dependencies)
		}
		at := strings.Index(out, "attnopt: loading ")
		if at < 0 || at > m[0] || !strings.Contains(out[at:m[0]], " "+file+" (from ") {
			t.Errorf("%v dlopened %s without announcing it first:\n%s", args, file, out)
		}
	}
}
