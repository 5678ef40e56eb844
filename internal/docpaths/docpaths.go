// Package docpaths finds the repository paths that documentation and
// source comments name, so a test can fail when one names a file that does
// not exist (issue 38: a redesign moved files and 25 references kept the
// old names).
//
// What counts as a path: in Markdown, a link target (not a URL or an
// anchor) and a backticked span; in a comment, a word. A span or word is a
// path when it has a slash, no spaces or placeholders (* … < > { } $ %), and
// its first segment names an entry of the repository's root or of the
// file's own folder or a folder above it (kernels/'s scripts name their
// files from kernels/): "passes/lower/cuda.go", "testdata/golden". Fenced code blocks are commands and output, not
// references, and are skipped; so are out-of-tree and generated paths
// (Ignored).
package docpaths

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Ignored are the folders of generated or installed files: a path with
// one of them as a segment is not checked (kernels/build/cpu/…, a
// script's .venv, the wheel's dist/).
var Ignored = []string{".cache", "build", ".venv", "venv", "site-packages", "dist", "__pycache__"}

// A Ref is a path named at a line of a file.
type Ref struct {
	File string // relative to the root
	Line int
	Path string
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	backtick = regexp.MustCompile("`([^`\n]+)`")
	// placeholder marks a pattern or an example, not a path.
	placeholder = regexp.MustCompile(`[*…<>{}$%|?\[\]=]|\b(NAME|FILE|MODEL|OUT|DIR|PATH|SYM)\b`)
	// lineSuffix is ":12" or ":12-30" after a file name.
	lineSuffix = regexp.MustCompile(`:\d+(-\d+)?$`)
)

// Markdown returns the paths a Markdown file names.
func Markdown(file string, text []byte) []Ref {
	var refs []Ref
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			refs = append(refs, Ref{file, n, target})
		}
		for _, m := range backtick.FindAllStringSubmatch(line, -1) {
			if w := clean(m[1]); w != "" {
				refs = append(refs, Ref{file, n, w})
			}
		}
	}
	return refs
}

// commentStart is where a line's comment begins, by the file's language.
func commentStart(file string) []string {
	switch filepath.Ext(file) {
	case ".go", ".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh":
		return []string{"// ", "//\t", "/* ", " * "}
	case ".py", ".sh", ".cmake", ".toml", ".yml", ".yaml":
		return []string{"# "}
	}
	if filepath.Base(file) == "CMakeLists.txt" {
		return []string{"# "}
	}
	return nil
}

// IsSource says whether Comments reads file.
func IsSource(file string) bool { return commentStart(file) != nil }

// Comments returns the paths the comments of a source file name.
func Comments(file string, text []byte) []Ref {
	starts := commentStart(file)
	var refs []Ref
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		at := -1
		for _, s := range starts {
			if i := strings.Index(line, s); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at < 0 {
			continue
		}
		for _, w := range strings.Fields(line[at:]) {
			if w = clean(strings.Trim(w, "`")); w != "" {
				refs = append(refs, Ref{file, n, w})
			}
		}
	}
	return refs
}

// clean is w as a candidate path, or "" when it cannot be one.
func clean(w string) string {
	w = strings.TrimRight(strings.TrimLeft(w, "(\"'`"), ".,;:)\"'`!")
	w = strings.TrimSuffix(w, "'s")
	w = lineSuffix.ReplaceAllString(w, "")
	if !strings.Contains(w, "/") || strings.ContainsAny(w, " \t") || placeholder.MatchString(w) ||
		strings.Contains(w, "://") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") || strings.HasPrefix(w, "-") {
		return ""
	}
	return w
}

// Missing are the refs that name a path of the tree, by their first
// segment, that exists neither relative to root nor to the referring
// file's folder.
func Missing(root string, refs []Ref) []Ref {
	var out []Ref
	for _, r := range refs {
		if ignored(r.Path) {
			continue
		}
		first := r.Path
		for strings.HasPrefix(first, "./") || strings.HasPrefix(first, "../") {
			_, first, _ = strings.Cut(first, "/")
		}
		first, _, _ = strings.Cut(first, "/")
		inTree, found := false, false
		for _, dir := range folders(root, r.File) {
			// The first segment is a folder (a slash follows it): a file of
			// that name, such as the ./attnopt binary scripts/demo.sh builds,
			// does not make "attnopt/site0/…" a path of the tree.
			inTree = inTree || (first != "" && isDir(dir, first))
			found = found || exists(dir, r.Path)
		}
		if inTree && !found {
			out = append(out, r)
		}
	}
	return out
}

// folders are the folders a path in file may be relative to: file's own
// and each above it, up to root.
func folders(root, file string) []string {
	dirs := []string{root}
	for d := filepath.Dir(filepath.FromSlash(file)); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		dirs = append(dirs, filepath.Join(root, d))
	}
	return dirs
}

func exists(base, p string) bool {
	_, err := os.Stat(filepath.Join(base, filepath.FromSlash(p)))
	return err == nil
}

func isDir(base, p string) bool {
	st, err := os.Stat(filepath.Join(base, filepath.FromSlash(p)))
	return err == nil && st.IsDir()
}

func ignored(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if slices.Contains(Ignored, seg) {
			return true
		}
	}
	return false
}
