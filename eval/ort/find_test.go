package ort

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// hermetic clears every variable the search reads and runs it from an
// empty folder, so only what a case sets up can be found.
func hermetic(t *testing.T) string {
	t.Helper()
	for _, v := range []string{"ORT_LIB", "ONNXRUNTIME_LIB", "ATTNOPT_CUSTOM_OPS", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH"} {
		t.Setenv(v, "")
	}
	dir := t.TempDir()
	t.Setenv("PATH", filepath.Join(dir, "nobin"))
	t.Chdir(dir)
	return dir
}

// The wheel's binary finds onnxruntime and its own custom-op library in
// the environment pip installed it into: a venv (PREFIX/bin and
// PREFIX/lib/python3.*/site-packages) or pip --target DIR (DIR/bin, DIR).
func TestOwnPythonEnvironment(t *testing.T) {
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python3.11", "site-packages")
	ortLib := touch(t, site, "onnxruntime", "capi", "libonnxruntime.so.1.24.3")
	touch(t, site, "onnxruntime", "capi", "libonnxruntime_providers_shared.so")
	ops := touch(t, site, "attnopt", "lib", "libattnopt_ort.so")
	target := t.TempDir()
	targetOrt := touch(t, target, "onnxruntime", "capi", "libonnxruntime.so.1.32.0")
	cases := []struct {
		name, exe, pkg string
		find           func(string) string
		want           string
	}{
		{"venv onnxruntime", filepath.Join(venv, "bin", "attnopt"), "onnxruntime", ortInPackage, ortLib},
		{"venv custom ops", filepath.Join(venv, "bin", "attnopt"), "attnopt", customOpsInPackage, ops},
		{"pip --target", filepath.Join(target, "bin", "attnopt"), "onnxruntime", ortInPackage, targetOrt},
		{"--target without the wheel's library", filepath.Join(target, "bin", "attnopt"), "attnopt", customOpsInPackage, ""},
		{"not in a bin folder", filepath.Join(venv, "attnopt"), "onnxruntime", ortInPackage, ""},
	}
	for _, tc := range cases {
		got, from := ownAt(tc.exe, tc.pkg, tc.find)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if got != "" && !strings.Contains(from, filepath.Dir(filepath.Dir(tc.exe))) {
			t.Errorf("%s: from %q does not name the environment", tc.name, from)
		}
	}
}

// Outside any checkout, with no variable set, the active Python
// environment is found: $VIRTUAL_ENV, else python3 on PATH (asked where
// it would import the package from); with none, the error lists where it
// looked and says what to install.
func TestActivePythonEnvironment(t *testing.T) {
	dir := hermetic(t)
	venv := filepath.Join(dir, "venv")
	site := filepath.Join(venv, "lib", "python3.12", "site-packages")
	ortLib := touch(t, site, "onnxruntime", "capi", "libonnxruntime.so.1.31.1")
	ops := touch(t, site, "attnopt", "lib", "libattnopt_ort.so")

	if _, err := LocateLibrary(""); err == nil || !strings.Contains(err.Error(), "pip install onnxruntime") || !strings.Contains(err.Error(), "the active Python environment") {
		t.Errorf("nothing installed: %v", err)
	}
	if _, err := LocateCustomOps(""); err == nil || !strings.Contains(err.Error(), "pip install attnopt") {
		t.Errorf("nothing installed: %v", err)
	}

	t.Setenv("VIRTUAL_ENV", venv)
	if f, err := LocateLibrary(""); err != nil || f.Path != ortLib || !strings.Contains(f.From, "$VIRTUAL_ENV") {
		t.Errorf("$VIRTUAL_ENV: %+v, %v", f, err)
	}
	if f, err := LocateCustomOps(""); err != nil || f.Path != ops {
		t.Errorf("$VIRTUAL_ENV custom ops: %+v, %v", f, err)
	}

	// No variable: a python3 on PATH that knows the packages (a stand-in
	// printing what find_spec would), asked in isolated mode (-I: the
	// working directory is not on sys.path).
	t.Setenv("VIRTUAL_ENV", "venv") // relative: would search the working directory
	t.Chdir(dir)
	if f, err := LocateLibrary(""); err == nil {
		t.Errorf("relative $VIRTUAL_ENV searched: %+v", f)
	}
	t.Setenv("VIRTUAL_ENV", "")
	bin := filepath.Join(dir, "nobin")
	py := touch(t, bin, "python3")
	script := "#!/bin/sh\n[ \"$1\" = -I ] || exit 1\ncase \"$4\" in onnxruntime) echo " + filepath.Join(site, "onnxruntime") + ";; attnopt) echo " + filepath.Join(site, "attnopt") + ";; esac\n"
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if f, err := LocateLibrary(""); err != nil || f.Path != ortLib || !strings.Contains(f.From, py) {
		t.Errorf("python3 on PATH: %+v, %v", f, err)
	}
	if f, err := LocateCustomOps(""); err != nil || f.Path != ops {
		t.Errorf("python3 on PATH custom ops: %+v, %v", f, err)
	}

	// Explicit sources win, in order: flag, $ORT_LIB, $ONNXRUNTIME_LIB.
	a, b, c := touch(t, dir, "a", "libonnxruntime.so"), touch(t, dir, "b", "libonnxruntime.so"), touch(t, dir, "c", "libonnxruntime.so")
	t.Setenv("ORT_LIB", b)
	t.Setenv("ONNXRUNTIME_LIB", c)
	for _, tc := range []struct{ flag, want, from string }{{a, a, "--ort-lib"}, {"", b, "$ORT_LIB"}} {
		if f, err := LocateLibrary(tc.flag); err != nil || f.Path != tc.want || f.From != tc.from {
			t.Errorf("explicit %q: %+v, %v", tc.flag, f, err)
		}
	}
	t.Setenv("ORT_LIB", "")
	if f, _ := LocateLibrary(""); f.Path != c || f.From != "$ONNXRUNTIME_LIB" {
		t.Errorf("$ONNXRUNTIME_LIB: %+v", f)
	}
	t.Setenv("ORT_LIB", filepath.Join(dir, "missing.so"))
	if _, err := LocateLibrary(""); err == nil || !strings.Contains(err.Error(), "from $ORT_LIB") {
		t.Errorf("missing $ORT_LIB: %v", err)
	}
}

// The system library path: $LD_LIBRARY_PATH's folders.
func TestSystemLibraryPath(t *testing.T) {
	dir := hermetic(t)
	lib := touch(t, dir, "opt", "lib", "libonnxruntime.so.1.24.3")
	t.Setenv("LD_LIBRARY_PATH", filepath.Join(dir, "none")+":"+filepath.Dir(lib))
	if f, err := LocateLibrary(""); err != nil || f.Path != lib || f.From != "the system library path" {
		t.Errorf("%+v, %v", f, err)
	}
}
