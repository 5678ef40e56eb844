package ort

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// pythonEnvs finds packages (onnxruntime, attnopt) in Python environments
// without importing them: by the folders pip installs into, and, last, by
// asking python3 where it would import them from.
type pythonEnvs struct{}

func newPythonEnvs() pythonEnvs { return pythonEnvs{} }

// own looks in the environment this binary was installed into: pip puts
// the attnopt wheel's binary in PREFIX/bin (a venv, ~/.local, /usr/local)
// and its packages in PREFIX/lib/python3.*/site-packages, or, with
// --target DIR, the binary in DIR/bin and the packages in DIR.
func (e pythonEnvs) own(pkg string, inPackage func(pkgDir string) string) (string, string) {
	exe, err := os.Executable()
	if err != nil {
		return "", ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return ownAt(exe, pkg, inPackage)
}

// ownAt is own for the binary at exe.
func ownAt(exe, pkg string, inPackage func(pkgDir string) string) (string, string) {
	bin := filepath.Dir(exe)
	if b := filepath.Base(bin); b != "bin" && b != "Scripts" {
		return "", ""
	}
	prefix := filepath.Dir(bin)
	for _, site := range append(siteDirs(prefix), prefix) {
		if p := inPackage(filepath.Join(site, pkg)); p != "" {
			return p, "the Python environment of this attnopt binary (" + prefix + ")"
		}
	}
	return "", ""
}

// active looks in the environment a user has activated ($VIRTUAL_ENV,
// $CONDA_PREFIX, absolute paths only), then asks python3 (and python) on
// PATH where pkg is. exec.LookPath refuses a PATH entry of "." or "" (it
// returns exec.ErrDot), so an interpreter in the working directory is not
// run; the interpreter runs isolated (packageDirs).
func (pythonEnvs) active(pkg string, inPackage func(pkgDir string) string) (string, string) {
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		prefix := os.Getenv(env)
		if !filepath.IsAbs(prefix) {
			continue // unset, or relative: that would search the working directory
		}
		for _, site := range siteDirs(prefix) {
			if p := inPackage(filepath.Join(site, pkg)); p != "" {
				return p, "the active Python environment ($" + env + "=" + prefix + ")"
			}
		}
	}
	for _, py := range []string{"python3", "python"} {
		exe, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		for _, dir := range packageDirs(exe, pkg) {
			if p := inPackage(dir); p != "" {
				return p, "the Python on PATH (" + exe + ")"
			}
		}
	}
	return "", ""
}

// siteDirs are the site-packages folders under an installation prefix.
func siteDirs(prefix string) []string {
	var out []string
	for _, pat := range []string{"lib/python3*/site-packages", "lib64/python3*/site-packages", "lib/python3*/dist-packages", "local/lib/python3*/dist-packages"} {
		m, _ := filepath.Glob(filepath.Join(prefix, pat))
		out = append(out, newestFirst(m)...)
	}
	return out
}

// findSpec prints where the interpreter would import a top-level package
// from; find_spec locates a top-level package without importing it.
const findSpec = `import importlib.util, sys
s = importlib.util.find_spec(sys.argv[1])
print("\n".join(s.submodule_search_locations or []) if s else "")`

// packageDirs asks the interpreter at exe for pkg's folders. -I isolates
// it: the working directory (and the script's) is not on sys.path and
// PYTHON* variables are ignored, so ./onnxruntime/capi/ in the folder
// attnopt runs in is not found (issue 34); the user site-packages is not
// searched either (a binary installed there finds it through own).
func packageDirs(exe, pkg string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-I", "-c", findSpec, pkg).Output()
	if err != nil {
		return nil
	}
	var dirs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			dirs = append(dirs, l)
		}
	}
	return dirs
}

// multiarch is Debian's library folder name for this architecture.
func multiarch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64-linux-gnu"
	case "arm64":
		return "aarch64-linux-gnu"
	}
	return runtime.GOARCH + "-linux-gnu"
}
