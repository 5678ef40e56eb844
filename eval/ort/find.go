package ort

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// isFile reports whether p names an existing regular file (or a link to one).
func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// abs makes p absolute so dlopen does not search the library path for it.
func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// DevEnv turns on development mode: the searches also look in
// .cache/ort (scripts/setup-ort.sh) and kernels/build (kernels/ci.sh) of the
// working directory and its parents, for the project's own test scripts.
// Off by default: a folder attnopt runs in (a checkout or archive it did not
// write) must not decide what code it loads (issue 34; docs/hardening.md).
const DevEnv = "ATTNOPT_DEV"

// DevMode reports whether $ATTNOPT_DEV is set to 1.
func DevMode() bool { return os.Getenv(DevEnv) == "1" }

// devMode names the mode in a Found's From.
const devMode = "development mode ($" + DevEnv + "=1)"

// DevNotice is the line a command prints when development mode widens a
// search, so a run that used it says so.
const DevNotice = devMode + ": searching .cache/ort and kernels/build in the working directory and its parents"

// walkUp calls try with each ancestor directory of the working directory,
// nearest first, and returns the first non-empty result; only in
// development mode (DevMode), else "".
func walkUp(try func(dir string) string) string {
	if !DevMode() {
		return ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if p := try(dir); p != "" {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// newestFirst sorts glob matches so that the highest version (by path)
// comes first; names compare by their numeric runs.
func newestFirst(paths []string) []string {
	sort.SliceStable(paths, func(i, j int) bool { return versionLess(paths[j], paths[i]) })
	return paths
}

// versionLess compares strings, reading runs of digits as numbers.
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		da, ra := leadingNumber(a)
		db, rb := leadingNumber(b)
		if da != "" && db != "" {
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

// leadingNumber splits s into its leading digits (without leading zeros)
// and the rest.
func leadingNumber(s string) (string, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return "", s
	}
	d := strings.TrimLeft(s[:i], "0")
	if d == "" {
		d = "0"
	}
	return d, s[i:]
}

func firstFile(patterns ...string) string {
	for _, pat := range patterns {
		m, _ := filepath.Glob(pat)
		for _, p := range newestFirst(m) {
			if isFile(p) {
				return p
			}
		}
	}
	return ""
}

// Found is a library and where the search found it.
type Found struct {
	Path string
	// From says where, for the line that tells the user which library ran:
	// "--ort-lib", "$ORT_LIB", "the Python environment /venv", "this
	// checkout's .cache/ort", "the system path".
	From string
}

// A search step names where it looks (for the error when nothing is
// found) and returns the library it finds there, if any.
type step struct {
	where string
	find  func() (path, from string)
}

// search runs the explicit sources (a flag or variable that names a file
// that must exist) and then the steps, in order.
func search(what string, explicit []source, steps []step, hint string) (Found, error) {
	for _, s := range explicit {
		if s.value == "" {
			continue
		}
		if !isFile(s.value) {
			return Found{}, fmt.Errorf("%s %s (from %s) not found; %s", what, s.value, s.name, hint)
		}
		return Found{Path: abs(s.value), From: s.name}, nil
	}
	var tried []string
	for _, s := range explicit {
		tried = append(tried, s.name)
	}
	for _, s := range steps {
		if p, from := s.find(); p != "" {
			return Found{Path: p, From: from}, nil
		}
		tried = append(tried, s.where)
	}
	return Found{}, fmt.Errorf("%s not found (looked at %s); %s", what, strings.Join(tried, ", "), hint)
}

// source is a flag or environment variable naming a library.
type source struct{ name, value string }

// ortHint and customOpsHint say what a user can do, wherever attnopt runs.
const (
	ortHint       = "install ONNX Runtime into the active Python environment (pip install onnxruntime), or set ORT_LIB (or --ort-lib) to a libonnxruntime.so of version 1.24 or newer"
	customOpsHint = "install the attnopt wheel into the active Python environment (pip install attnopt-*.whl; it carries libattnopt_ort.so and this command), or set ATTNOPT_CUSTOM_OPS (or --custom-ops) to a libattnopt_ort.so"
)

// LocateLibrary finds ONNX Runtime's shared library: the flag; $ORT_LIB
// (or $ONNXRUNTIME_LIB, its older name); the onnxruntime package of the
// Python environment this binary was installed into (onnxruntime/capi/);
// in development mode only ($ATTNOPT_DEV=1), this checkout's .cache/ort/*/
// (scripts/setup-ort.sh, found walking up from the working directory); the
// active Python environment ($VIRTUAL_ENV, $CONDA_PREFIX, then python3 -I
// on PATH); the system's library folders ($LD_LIBRARY_PATH, /usr/local/lib,
// /usr/lib…). Nothing else in the working directory is searched.
func LocateLibrary(flag string) (Found, error) {
	envs := newPythonEnvs()
	return search("ONNX Runtime library",
		[]source{{"--ort-lib", flag}, {"$ORT_LIB", os.Getenv("ORT_LIB")}, {"$ONNXRUNTIME_LIB", os.Getenv("ONNXRUNTIME_LIB")}},
		[]step{
			{"the Python environment of this attnopt binary", func() (string, string) { return envs.own("onnxruntime", ortInPackage) }},
			{".cache/ort/*/libonnxruntime.so.1 in the working directory and its parents (development mode only)", func() (string, string) {
				p := walkUp(func(dir string) string {
					return firstFile(filepath.Join(dir, ".cache", "ort", "*", "libonnxruntime.so.1"))
				})
				return p, "this checkout's .cache/ort, " + devMode
			}},
			{"the active Python environment (onnxruntime/capi/)", func() (string, string) { return envs.active("onnxruntime", ortInPackage) }},
			{"the system library path", func() (string, string) { return systemLibrary("libonnxruntime.so*"), "the system library path" }},
		}, ortHint)
}

// FindLibrary is LocateLibrary's path.
func FindLibrary(flag string) (string, error) {
	f, err := LocateLibrary(flag)
	return f.Path, err
}

// ortInPackage is the library inside an onnxruntime package folder.
func ortInPackage(pkg string) string {
	return firstFile(filepath.Join(pkg, "capi", "libonnxruntime.so*"))
}

// customOpsInPackage is the library inside an installed attnopt package
// (python/CMakeLists.txt installs it as attnopt/lib/).
func customOpsInPackage(pkg string) string {
	if p := filepath.Join(pkg, "lib", "libattnopt_ort.so"); isFile(p) {
		return p
	}
	return ""
}

// customOpsCandidates are the build outputs searched under each ancestor
// directory, preferred first: kernels/ci.sh builds the CPU library in
// kernels/build/cpu (and CUDA-enabled ones in kernels/build/cuda13 and
// cuda12).
var customOpsCandidates = []string{
	"kernels/build/libattnopt_ort.so",
	"kernels/build/cpu/libattnopt_ort.so",
	"kernels/build/cuda13/libattnopt_ort.so",
	"kernels/build/cuda12/libattnopt_ort.so",
}

// LocateCustomOps finds attnopt's custom-op library: the flag;
// $ATTNOPT_CUSTOM_OPS; the attnopt wheel that installed this binary
// (attnopt/lib/ beside it in site-packages); in development mode only,
// this checkout's kernels/build (walking up from the working directory);
// the attnopt package of the active Python environment; the system's
// library folders.
func LocateCustomOps(flag string) (Found, error) {
	envs := newPythonEnvs()
	return search("attnopt's custom-op library libattnopt_ort.so",
		[]source{{"--custom-ops", flag}, {"$ATTNOPT_CUSTOM_OPS", os.Getenv("ATTNOPT_CUSTOM_OPS")}},
		[]step{
			{"the attnopt wheel that installed this binary", func() (string, string) { return envs.own("attnopt", customOpsInPackage) }},
			{strings.Join(customOpsCandidates, ", ") + " in the working directory and its parents (development mode only)", func() (string, string) {
				p := walkUp(func(dir string) string {
					for _, c := range customOpsCandidates {
						if p := filepath.Join(dir, c); isFile(p) {
							return p
						}
					}
					return ""
				})
				return p, "this checkout's kernels/build, " + devMode
			}},
			{"the attnopt package of the active Python environment", func() (string, string) { return envs.active("attnopt", customOpsInPackage) }},
			{"the system library path", func() (string, string) { return systemLibrary("libattnopt_ort.so"), "the system library path" }},
		}, customOpsHint)
}

// CustomOpsLibrary is LocateCustomOps's path.
func CustomOpsLibrary(flag string) (string, error) {
	f, err := LocateCustomOps(flag)
	return f.Path, err
}

// systemLibrary is the newest match of pattern in $LD_LIBRARY_PATH's
// absolute folders and the usual system library folders.
func systemLibrary(pattern string) string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if filepath.IsAbs(d) { // "" and relative entries would search the working directory
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, "/usr/local/lib", "/usr/lib", "/usr/lib64", "/usr/lib/"+multiarch(), "/opt/onnxruntime/lib")
	pats := make([]string, len(dirs))
	for i, d := range dirs {
		pats[i] = filepath.Join(d, pattern)
	}
	return firstFile(pats...)
}

// LocateCUDADriver finds the CUDA driver library in the system's library
// folders (absolute $LD_LIBRARY_PATH entries, then the usual ones, WSL's
// included), so that probing it never dlopens a name the loader could
// resolve against the working directory (an empty $LD_LIBRARY_PATH
// entry). Empty when there is none.
func LocateCUDADriver() Found {
	p := systemLibrary("libcuda.so.1")
	if p == "" {
		p = firstFile("/usr/lib/wsl/lib/libcuda.so.1")
	}
	if p == "" {
		return Found{}
	}
	return Found{Path: p, From: "the system library path"}
}
