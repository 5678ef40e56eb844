// Package corpus finds the third-party attention models that tests read
// (ONNX's backend node tests, ONNX Runtime's and Polygraphy's test models):
// a folder kept beside the repository, never inside it, so a fresh clone
// does not have it. Tests that need it skip with one line saying so; CI,
// which has it, runs them (scripts/test.sh lists what was skipped).
package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Env names the variable that points at the corpus from anywhere.
const Env = "ATTNOPT_CORPUS"

// Root is the corpus folder: $ATTNOPT_CORPUS when set, else shared/corpus
// beside the repository (the folder holding go.mod, found from the working
// directory). ok is false when that folder does not exist.
func Root() (dir string, ok bool) {
	if env := os.Getenv(Env); env != "" {
		return env, isDir(env)
	}
	repo := repoRoot()
	if repo == "" {
		return "", false
	}
	dir = filepath.Join(filepath.Dir(repo), "shared", "corpus")
	return dir, isDir(dir)
}

// Require returns the corpus folder, or skips t with one line naming the
// folder it looked for and how to provide one.
func Require(t testing.TB) string {
	t.Helper()
	dir, ok := Root()
	if !ok {
		if dir == "" {
			dir = "../shared/corpus"
		}
		t.Skipf("corpus not present: %s does not exist (a clone without the shared corpus beside it; set %s to run this test)", dir, Env)
	}
	return dir
}

// Path is a file or folder inside the corpus; it skips t as Require does
// when the corpus, or that entry of it, is absent.
func Path(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Require(t)}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("corpus entry not present: %s", p)
	}
	return p
}

// Glob is the corpus entries matching pattern (relative to the corpus);
// it skips t when the corpus is absent or nothing matches.
func Glob(t testing.TB, pattern string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(Require(t), pattern))
	if len(m) == 0 {
		t.Skipf("corpus holds nothing matching %s", pattern)
	}
	return m
}

// Rel is p relative to the corpus root, for messages and lookup tables.
func Rel(p string) string {
	if dir, ok := Root(); ok {
		if r, err := filepath.Rel(dir, p); err == nil {
			return filepath.ToSlash(r)
		}
	}
	return p
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// repoRoot walks up from the working directory to the folder with go.mod.
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Lookup is a corpus entry for a table that mixes corpus models with the
// repository's own: ok is false (and the caller logs one line and goes on)
// when the entry is absent.
func Lookup(parts ...string) (string, bool) {
	dir, ok := Root()
	if !ok {
		return filepath.Join(append([]string{dir}, parts...)...), false
	}
	p := filepath.Join(append([]string{dir}, parts...)...)
	_, err := os.Stat(p)
	return p, err == nil
}
