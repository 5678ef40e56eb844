// Command gen writes the files generated from internal/opdef's table:
// the typed attribute values of Go (attrs_gen.go), the C ABI's limits,
// the ONNX Runtime library's attribute table and
// conformance cases, the ctypes constants, docs/ops.md and the generated
// regions of kernels/README.md and docs/cli.md. Run it with
// `go generate ./internal/opdef`; its test fails when a file is stale.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	root, err := repoRoot()
	if err == nil {
		err = write(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "opdef gen:", err)
		os.Exit(1)
	}
}

// write renders every file and replaces the ones that changed, each
// through a temporary file and a rename.
func write(root string) error {
	files, err := render(root)
	if err != nil {
		return err
	}
	for _, rel := range sortedKeys(files) {
		path := filepath.Join(root, rel)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[rel]) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, files[rel], 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		fmt.Println("wrote", rel)
	}
	return nil
}

// repoRoot is the folder above the working directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// render returns every generated file by its path in the repository; the
// regions of hand-written files are replaced in their current text.
func render(root string) (map[string][]byte, error) {
	out := map[string][]byte{
		"kernels/include/attnopt/attnopt_limits.h": renderLimitsH(),
		"kernels/src/ort/op_table.h":               renderOpTableH(),
		"kernels/tests/op_cases.inc":               renderCasesInc(),
		"kernels/bench/attnopt_ops.py":             renderPy(),
		"docs/ops.md":                              renderOpsMd(),
		"internal/opdef/attrs_gen.go":              renderAttrsGo(),
	}
	regions := map[string]map[string]string{
		"kernels/README.md": {"attrs": attrsText("../docs/ops.md")},
		"docs/cli.md":       {"attnopt-target": writtenText()},
	}
	for rel, rs := range regions {
		text, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		for name, body := range rs {
			if text, err = replaceRegion(text, name, body); err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
		}
		out[rel] = text
	}
	return out, nil
}
