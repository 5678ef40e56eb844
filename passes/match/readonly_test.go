package match

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	modulePath = "github.com/attnopt/attnopt"
	thisPkg    = modulePath + "/passes/match"
)

// TestMatchIsReadOnlyOutside: no code outside this package writes into a
// Match the rule set returned: no assignment, ++/-- or address taken of a
// Match field (or anything inside one: s.Masks[i].Value, s.Perm.Q), and no
// Match built from a literal. Type-checked, so passes.Site (an alias) and
// a stage's copy held in a struct field are seen too. A stage that needs
// the site with other operands asks this package for a copy (Materialised).
// Tests are not checked: they build sites to probe the floors above.
func TestMatchIsReadOnlyOutside(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	var bad []string
	checked := 0
	for _, dir := range importers(t, root) {
		files := parseDir(t, fset, dir)
		rel, _ := filepath.Rel(root, dir)
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp.(types.ImporterFrom), Error: func(error) {}}
		if _, err := conf.Check(modulePath+"/"+filepath.ToSlash(rel), fset, files, info); err != nil {
			t.Fatalf("%s does not type-check: %v", rel, err)
		}
		checked++
		isMatch := func(e ast.Expr) bool {
			tv, ok := info.Types[e]
			if !ok {
				return false
			}
			typ := tv.Type
			if p, ok := typ.(*types.Pointer); ok {
				typ = p.Elem()
			}
			n, ok := types.Unalias(typ).(*types.Named)
			return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == thisPkg && n.Obj().Name() == "Match"
		}
		// inMatch reports whether e is a Match's field or something inside
		// one, reached through selectors, indexes, stars and parentheses.
		var inMatch func(e ast.Expr) bool
		inMatch = func(e ast.Expr) bool {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				return isMatch(x.X) || inMatch(x.X)
			case *ast.IndexExpr:
				return inMatch(x.X)
			case *ast.StarExpr:
				return inMatch(x.X)
			case *ast.ParenExpr:
				return inMatch(x.X)
			}
			return false
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				var at ast.Expr
				switch x := n.(type) {
				case *ast.AssignStmt:
					if x.Tok != token.DEFINE {
						for _, l := range x.Lhs {
							if inMatch(l) {
								at = l
							}
						}
					}
				case *ast.IncDecStmt:
					if inMatch(x.X) {
						at = x.X
					}
				case *ast.UnaryExpr:
					if x.Op == token.AND && inMatch(x.X) {
						at = x.X
					}
				case *ast.CompositeLit:
					if isMatch(x) {
						at = x
					}
				}
				if at != nil {
					bad = append(bad, fset.Position(at.Pos()).String())
				}
				return true
			})
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d packages; the walk found too few (run from passes/match)", checked)
	}
	for _, b := range bad {
		rel, _ := filepath.Rel(root, b)
		t.Errorf("%s writes into a Match outside passes/match", rel)
	}
}

// importers are the module's package folders outside this one whose
// non-test files import the matcher or the passes that alias it.
func importers(t *testing.T, root string) []string {
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "kernels" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir := filepath.Dir(path)
		if dir == filepath.Join(root, "passes", "match") || seen[dir] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, modulePath+"/passes") {
				seen[dir] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// parseDir parses a package's non-test files.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
