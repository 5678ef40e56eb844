package docpaths

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the repository's root, two folders up.
var root = filepath.Join("..", "..")

// docs are the Markdown files a newcomer reads.
func docs(t *testing.T) []string {
	files := []string{"README.md", "kernels/README.md", "python/README.md", "bench/README.md"}
	md, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, m := range md {
		files = append(files, filepath.ToSlash(relTo(root, m)))
	}
	filepath.WalkDir(filepath.Join(root, "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "README.md" {
			files = append(files, filepath.ToSlash(relTo(root, p)))
		}
		return nil
	})
	return files
}

// skipDirs are folders of generated or downloaded files.
var skipDirs = map[string]bool{".git": true, ".cache": true, "build": true, ".venv": true, "__pycache__": true, "node_modules": true, "fuzz": true}

// sources are the files whose comments are read.
func sources(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() && IsSource(p) && !strings.HasSuffix(p, ".pb.go") {
			files = append(files, filepath.ToSlash(relTo(root, p)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Every repository path that a doc or a comment names exists (issue 38).
// A reference to a generated or out-of-tree file belongs in Ignored.
func TestDocPathsExist(t *testing.T) {
	var refs []Ref
	for _, f := range docs(t) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, Markdown(f, text)...)
	}
	srcs := sources(t)
	if len(srcs) < 100 {
		t.Fatalf("found %d source files: the walk is wrong", len(srcs))
	}
	for _, f := range srcs {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, Comments(f, text)...)
	}
	if len(refs) < 200 {
		t.Fatalf("found %d references: the extraction is wrong", len(refs))
	}
	for _, r := range Missing(root, refs) {
		t.Errorf("%s:%d names %s, which does not exist", r.File, r.Line, r.Path)
	}
}

// What is read as a path, and what is not.
func TestExtraction(t *testing.T) {
	md := "See [design](design.md#layout) and [site](https://x.org/a/b.md), `passes/lower/cuda.go:12`, `../report/schema/`.\n" +
		"```\ncp `testdata/not/read.onnx` x\n```\n" +
		"Patterns are not paths: `testdata/*.onnx`, `OUT/…`, `--dim seq=1`, `a/b c`, `$TMPDIR/x`, `/usr/lib/x.so`, `eval/ort`'s.\n"
	var got []string
	for _, r := range Markdown("docs/x.md", []byte(md)) {
		got = append(got, r.Path)
	}
	want := []string{"design.md", "passes/lower/cuda.go", "../report/schema/", "eval/ort"}
	if !slices.Equal(got, want) {
		t.Errorf("Markdown: %q, want %q", got, want)
	}
	src := "x := a / b // see graph/decode.go, (passes/lower) and eval/ort's find.go\n# not a comment in Go\n"
	got = nil
	for _, r := range Comments("graph/x.go", []byte(src)) {
		got = append(got, r.Path)
	}
	want = []string{"graph/decode.go", "passes/lower", "eval/ort"}
	if !slices.Equal(got, want) {
		t.Errorf("Comments: %q, want %q", got, want)
	}
	refs := []Ref{
		{"docs/x.md", 1, "design.md"}, {"docs/x.md", 1, "../report/schema/"}, {"graph/x.go", 1, "testdata/fuzz"},
		{"docs/x.md", 1, "passes/cuda_path.go"}, {"docs/x.md", 1, "no/such/tree.go"}, {"docs/x.md", 1, ".cache/ort/x.so"},
		{"docs/x.md", 1, "missing.md/x"},
	}
	var missing []string
	for _, r := range Missing(root, refs) {
		missing = append(missing, r.Path)
	}
	if want := []string{"passes/cuda_path.go"}; !slices.Equal(missing, want) {
		t.Errorf("Missing: %q, want %q", missing, want)
	}
}

// relTo is p relative to base.
func relTo(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return rel
}
