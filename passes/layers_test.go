package passes_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The floors of passes/, lowest first: a package imports only packages on
// floors below its own (go list -deps), and none of the packages that use
// passes (report, validate, cmd).
var floors = map[string]int{
	"passes/schema":        0,
	"passes/emit":          0,
	"passes/cleanup":       0,
	"passes/match/posmask": 0,
	"passes/match/masks":   0,
	"passes/match/resolve": 1,
	"passes/match":         2,
	"passes/plan":          3,
	"passes/canonical":     4,
	"passes/lower":         5,
	"passes":               6,
}

const module = "github.com/attnopt/attnopt/"

func TestNoImportRunsUpTheFloors(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for pkg, floor := range floors {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", module+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, ok := strings.CutPrefix(dep, module)
			if !ok || rel == pkg {
				continue
			}
			if f, in := floors[rel]; in && f >= floor {
				t.Errorf("%s (floor %d) imports %s (floor %d)", pkg, floor, rel, f)
			}
			for _, above := range []string{"report", "validate", "cmd/"} {
				if strings.HasPrefix(rel, above) {
					t.Errorf("%s imports %s, which uses passes", pkg, rel)
				}
			}
		}
	}
	// Every package under passes/ has a floor.
	out, err := exec.Command(goTool, "list", module+"passes/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if _, ok := floors[strings.TrimPrefix(p, module)]; !ok {
			t.Errorf("%s has no floor in passes/layers_test.go", p)
		}
	}
}
