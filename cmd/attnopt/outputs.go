package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/attnopt/attnopt/graph"
)

// checkOutputPath fails before any work when path cannot be written as a
// file: it is a directory, or its folder does not exist.
func checkOutputPath(flag, path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usageError{fmt.Errorf("%s %s is a directory; give a file name", flag, path)}
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return usageError{fmt.Errorf("%s %s: folder %s does not exist", flag, path, dir)}
	}
	if !st.IsDir() {
		return usageError{fmt.Errorf("%s %s: %s is not a folder", flag, path, dir)}
	}
	return nil
}

// checkNoOverwrite refuses outputs that would replace a file the input
// reads: the model itself or any of its external-data files. Every file
// rewrite may write is listed in writes (the model, its data file, the
// reports).
func checkNoOverwrite(model string, m *graph.Model, writes []outputFile) error {
	reads := append([]string{model}, m.ReadPaths()...)
	for _, w := range writes {
		if w.path == "" {
			continue
		}
		for _, r := range reads {
			if samePath(w.path, r) {
				return usageError{fmt.Errorf("%s %s would overwrite %s, which the input %s reads; attnopt never modifies its input", w.what, w.path, r, model)}
			}
		}
	}
	return nil
}

// outputFile is a file a command will write and the flag or role that
// names it, for messages.
type outputFile struct{ what, path string }

// samePath: one existing file under two names, or the same cleaned path.
func samePath(a, b string) bool {
	if same, _ := sameFile(a, b); same {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
