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

// walkUp calls try with each ancestor directory of the working directory,
// nearest first, and returns the first non-empty result.
func walkUp(try func(dir string) string) string {
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

// FindLibrary resolves the ONNX Runtime library path: flag value if
// non-empty, else $ONNXRUNTIME_LIB, else well-known places (walking up from
// the working directory for .cache/ort/*/libonnxruntime.so.1, where
// scripts/setup-ort.sh unpacks it, then /usr/lib/libonnxruntime.so* and
// /usr/local/lib/libonnxruntime.so*).
func FindLibrary(flag string) (string, error) {
	if flag != "" {
		if !isFile(flag) {
			return "", fmt.Errorf("ONNX Runtime library %s (from --ort-lib) not found; run bash scripts/setup-ort.sh to unpack one", flag)
		}
		return abs(flag), nil
	}
	if env := os.Getenv("ONNXRUNTIME_LIB"); env != "" {
		if !isFile(env) {
			return "", fmt.Errorf("ONNX Runtime library %s (from $ONNXRUNTIME_LIB) not found; run bash scripts/setup-ort.sh to unpack one", env)
		}
		return abs(env), nil
	}
	if p := walkUp(func(dir string) string {
		return firstFile(filepath.Join(dir, ".cache", "ort", "*", "libonnxruntime.so.1"))
	}); p != "" {
		return p, nil
	}
	if p := firstFile("/usr/lib/libonnxruntime.so*", "/usr/local/lib/libonnxruntime.so*"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("ONNX Runtime library not found (tried --ort-lib, $ONNXRUNTIME_LIB, .cache/ort/*/libonnxruntime.so.1 in the working directory and its parents, /usr/lib/libonnxruntime.so*, /usr/local/lib/libonnxruntime.so*); run bash scripts/setup-ort.sh and pass the path it prints with --ort-lib or $ONNXRUNTIME_LIB")
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

// CustomOpsLibrary finds the project's custom-op library: flag if set, else
// $ATTNOPT_CUSTOM_OPS, else kernels/build/libattnopt_ort.so (or the cpu/, cuda13/
// and cuda12/ build folders kernels/ci.sh uses) walking up from the working
// directory.
func CustomOpsLibrary(flag string) (string, error) {
	const how = "build it with bash kernels/ci.sh or the cmake commands in kernels/README.md"
	if flag != "" {
		if !isFile(flag) {
			return "", fmt.Errorf("custom-op library %s not found; %s", flag, how)
		}
		return abs(flag), nil
	}
	if env := os.Getenv("ATTNOPT_CUSTOM_OPS"); env != "" {
		if !isFile(env) {
			return "", fmt.Errorf("custom-op library %s (from $ATTNOPT_CUSTOM_OPS) not found; %s", env, how)
		}
		return abs(env), nil
	}
	if p := walkUp(func(dir string) string {
		for _, c := range customOpsCandidates {
			if p := filepath.Join(dir, c); isFile(p) {
				return p
			}
		}
		return ""
	}); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("custom-op library libattnopt_ort.so not found (tried $ATTNOPT_CUSTOM_OPS and %s in the working directory and its parents); %s",
		strings.Join(customOpsCandidates, ", "), how)
}
